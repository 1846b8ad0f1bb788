"""The online estimator: readings in, a fixed-lag smoother over a time grid, estimates out."""
