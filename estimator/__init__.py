"""Mechanism model, classical kinematics and dynamics, factor-graph estimator."""
