"""Dynamics solved as factor graphs (Xie and Dellaert): forward, inverse and hybrid."""
