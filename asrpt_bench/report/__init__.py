"""Tables and figures from run outputs and collected results (never reruns simulations)."""
