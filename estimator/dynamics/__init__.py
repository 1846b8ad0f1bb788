"""Classical dynamics: forward (Lagrange/Baumgarte, ALi3, R matrix), inverse dynamics, statics."""
