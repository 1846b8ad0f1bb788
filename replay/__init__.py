"""Logs, offline replay, scenario simulation and reports."""
