"""Spatial dynamics as factor graphs (Xie and Dellaert, "A unified method for solving inverse,
forward, and hybrid manipulator dynamics using factor graphs"): inverse, forward and hybrid
dynamics of a URDF tree or closed chain as one linear graph each, eliminated in the orderings that
recover the RNEA, the CRBA and the ABA (trees), or in fill-reducing ones.
"""
