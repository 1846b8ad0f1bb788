"""Safe arithmetic expressions for mechanism YAML files, e.g. ``(1/3)*mass*length^2``.

The text is parsed with :mod:`ast` and evaluated by walking an explicit whitelist of node
types; nothing is ever handed to ``eval``/``exec``. As in the upstream MBSE files, ``^``
means power (``**`` is accepted too).
"""

from __future__ import annotations

import ast
import math
import numbers
import operator
from collections.abc import Callable, Mapping

from estimator.errors import shown


class ExpressionError(ValueError):
    """One-line message naming the problem, e.g. "undefined variable 'x7' in '2*x7'"."""


_BINARY: dict[type[ast.operator], tuple[str, Callable[[float, float], float]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.Pow: ("^", math.pow),  # math.pow raises instead of returning a complex number
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos, ast.USub: operator.neg,
}
# name -> (function, number of positional arguments; None means one or more)
_FUNCTIONS: dict[str, tuple[Callable[..., float], int | None]] = {
    "sin": (math.sin, 1), "cos": (math.cos, 1), "tan": (math.tan, 1),
    "asin": (math.asin, 1), "acos": (math.acos, 1), "atan": (math.atan, 1),
    "atan2": (math.atan2, 2),
    "sqrt": (math.sqrt, 1), "abs": (abs, 1), "exp": (math.exp, 1), "log": (math.log, 1),
    "log10": (math.log10, 1), "min": (lambda *a: min(a), None), "max": (lambda *a: max(a), None),
    "floor": (math.floor, 1), "ceil": (math.ceil, 1), "deg2rad": (math.radians, 1),
    "rad2deg": (math.degrees, 1), "hypot": (math.hypot, 2),
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
_NOT_ALLOWED: dict[type[ast.AST], str] = {
    ast.Attribute: "attributes", ast.Subscript: "subscripts", ast.Compare: "comparisons",
    ast.BoolOp: "boolean operators", ast.Lambda: "lambdas", ast.Starred: "starred arguments",
    ast.IfExp: "conditional expressions", ast.JoinedStr: "f-strings",
}


def _number(value: object, what: str) -> float:
    """``value`` as a finite float; bools and non-numbers are rejected."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ExpressionError(f"{what} is not a number ({type(value).__name__})")
    try:
        result = float(value)
    except OverflowError:  # an integer beyond the float range
        raise ExpressionError(f"{what} is too large for a float") from None
    if not math.isfinite(result):
        raise ExpressionError(f"{what} is not finite ({result})")
    return result


def _apply(what: str, function: Callable[..., float], *args: float) -> float:
    """``function(*args)`` as a finite float; arithmetic failures become ExpressionError."""
    try:
        value = float(function(*args))
    except ZeroDivisionError:
        raise ExpressionError("division by zero") from None
    except (ValueError, OverflowError) as exc:
        raise ExpressionError(f"{what}: {exc}") from None
    if not math.isfinite(value):
        raise ExpressionError(f"{what}: non-finite result {value}")
    return value


def _eval(node: ast.AST, variables: Mapping[str, float]) -> float:
    """Value of one whitelisted AST node."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"constant {node.value!r} is not allowed (only numbers)")
        return _number(node.value, f"constant {shown(node.value)}")
    if isinstance(node, ast.Name):
        if node.id in variables:
            return _number(variables[node.id], f"variable '{node.id}'")
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ExpressionError(f"undefined variable '{node.id}'")
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, variables))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        symbol, function = _BINARY[type(node.op)]
        left, right = _eval(node.left, variables), _eval(node.right, variables)
        return _apply(f"{left:g} {symbol} {right:g}", function, left, right)
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name):
            raise ExpressionError("only calls of named functions are allowed")
        if node.func.id not in _FUNCTIONS:
            raise ExpressionError(f"unknown function '{node.func.id}'")
        if node.keywords:
            raise ExpressionError(f"keyword arguments are not allowed in {node.func.id}()")
        function, arity = _FUNCTIONS[node.func.id]
        if (arity is None and not node.args) or (arity is not None and len(node.args) != arity):
            expected = "at least 1" if arity is None else str(arity)
            raise ExpressionError(
                f"{node.func.id}() takes {expected} argument(s), got {len(node.args)}")
        args = [_eval(arg, variables) for arg in node.args]
        return _apply(f"{node.func.id}({', '.join(f'{a:g}' for a in args)})", function, *args)
    if isinstance(node, (ast.UnaryOp, ast.BinOp)):
        raise ExpressionError(f"operator {type(node.op).__name__} is not allowed")
    what = _NOT_ALLOWED.get(type(node), f"{type(node).__name__} expressions")
    raise ExpressionError(f"{what} are not allowed")


def _shown(text: str) -> str:
    """``text`` on one line and at most 60 characters, for error messages."""
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:57] + "..."


def evaluate(expression: str | int | float, variables: Mapping[str, float]) -> float:
    """Value of an arithmetic expression; numbers (int/float, not bool) pass through as float."""
    if not isinstance(expression, str):
        return _number(expression, f"value {shown(expression)}")
    text = expression.strip()
    if not text:
        raise ExpressionError("empty expression")
    quoted = _shown(text)
    try:
        tree = ast.parse(text.replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes
        raise ExpressionError(f"bad expression '{quoted}' ({getattr(exc, 'msg', exc)})") from None
    except (RecursionError, MemoryError):  # how the parser reports excessive nesting
        raise ExpressionError(f"bad expression '{quoted}' (too deeply nested)") from None
    try:
        return _eval(tree.body, variables)
    except ExpressionError as exc:
        raise ExpressionError(f"{exc} in '{quoted}'") from None
    except RecursionError:
        raise ExpressionError(f"bad expression '{quoted}' (too deeply nested)") from None
