"""Spatial open-chain (tree) mechanisms read from URDF: model, Lie-group kinematics and O(n) dynamics.

Conventions (Müller, MSD 42:219, 2018; Lynch and Park): a twist is (ω; v), a wrench (t; f), angular
part first; body frames are the URDF link frames of the moving bodies; SI units.
"""
