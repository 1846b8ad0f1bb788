"""Spatial mechanisms read from URDF: open chains (trees) with Lie-group kinematics and O(n) dynamics,
and closed chains (a URDF spanning tree plus the sidecar's loop closures) with constrained dynamics.

Conventions (Müller, MSD 42:219, 2018; Lynch and Park): a twist is (ω; v), a wrench (t; f), angular
part first; body frames are the URDF link frames of the moving bodies; SI units.
"""
