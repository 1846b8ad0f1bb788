"""Tests for the safe arithmetic evaluator used by mechanism YAML files."""

import math

import pytest

from estimator.expressions import ExpressionError, evaluate


@pytest.mark.parametrize(
    ("expression", "variables", "expected"),
    [
        ("(1/3)*mass*length^2", {"mass": 2, "length": 3}, 6.0),
        ("2.0*cos(deg2rad(45.0))", {}, math.sqrt(2.0)),
        ("x1+5*cos(45*pi/180)", {"x1": 7}, 7 + 5 * math.cos(math.pi / 4)),
        ("(1/2)*mass*length12^2", {"mass": 4, "length12": 0.5}, 0.5),
        ("0.5*length", {"length": 3}, 1.5),
        ("-x^2", {"x": 3}, -9.0),
        ("2^3^2", {}, 512.0),
        ("2**3", {}, 8.0),
        ("L", {"L": 0.25}, 0.25),
        ("2*L", {"L": 0.25}, 0.5),
        ("  +L - 1 ", {"L": 0.25}, -0.75),
        ("e", {}, math.e),
        ("pi", {"pi": 3}, 3.0),  # a variable overrides the constant
        ("atan2(1, 1) + hypot(3, 4)", {}, math.pi / 4 + 5),
        ("min(3, 1, 2) + max(2) + floor(2.5) + ceil(2.5)", {}, 1 + 2 + 2 + 3),
        ("rad2deg(asin(1)) + abs(-2) + log(exp(1)) + log10(100)", {}, 90 + 2 + 1 + 2),
        ("sqrt(16) + tan(0) + acos(1) + atan(0) + sin(0)", {}, 4.0),
    ],
)
def test_evaluates(expression: str, variables: dict[str, float], expected: float) -> None:
    value = evaluate(expression, variables)
    assert type(value) is float
    assert value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("number", [3, 2.5, -1e-3])
def test_numbers_pass_through_as_float(number: float) -> None:
    value = evaluate(number, {})
    assert type(value) is float and value == number


@pytest.mark.parametrize(
    ("expression", "variables", "message"),
    [
        ("2*x7", {}, r"^undefined variable 'x7' in '2\*x7'$"),
        ("foo(1)", {}, r"^unknown function 'foo'"),
        ("__import__('os')", {}, r"^unknown function '__import__'"),
        ("().__class__", {}, r"^attributes are not allowed"),
        ("math.pi", {}, r"^attributes are not allowed"),
        ("x.real(1)", {"x": 1}, r"only calls of named functions"),
        ("[1][0]", {}, r"subscripts are not allowed"),
        ("'abc'", {}, r"constant 'abc' is not allowed \(only numbers\)"),
        ("True", {}, r"constant True is not allowed"),
        ("1 < 2", {}, r"comparisons are not allowed"),
        ("lambda: 1", {}, r"lambdas are not allowed"),
        ("max(1, key=2)", {}, r"keyword arguments are not allowed in max\(\)"),
        ("min(*x)", {"x": 1}, r"starred arguments are not allowed"),
        ("7 // 2", {}, r"operator FloorDiv is not allowed"),
        ("atan2(1)", {}, r"atan2\(\) takes 2 argument\(s\), got 1"),
        ("min()", {}, r"min\(\) takes at least 1 argument\(s\), got 0"),
        ("1/0", {}, r"^division by zero in '1/0'$"),
        ("1/(x-2)", {"x": 2}, r"^division by zero"),
        ("sqrt(-1)", {}, r"^sqrt\(-1\): math domain error in 'sqrt\(-1\)'$"),
        ("(-8)^(1/3)", {}, r"math domain error"),
        ("exp(1000)", {}, r"math range error"),
        ("1e308*10", {}, r"non-finite result inf"),
        ("x", {"x": True}, r"variable 'x' is not a number \(bool\)"),
        ("x", {"x": math.nan}, r"variable 'x' is not finite"),
        ("2*(", {}, r"^bad expression '2\*\(' \("),
        ("2*", {}, r"^bad expression '2\*' \(invalid syntax\)$"),
        ("1 +\n", {}, r"^bad expression '1 \+' \(invalid syntax\)$"),
        ("1 +\n 2", {}, r"^bad expression '1 \+ 2' \(invalid syntax\)$"),  # message stays one line
        ("-" * 100_000 + "1", {}, r"too deeply nested"),
        ("", {}, r"^empty expression$"),
        ("   ", {}, r"^empty expression$"),
    ],
)
def test_rejects(expression: str, variables: dict[str, float], message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        evaluate(expression, variables)


@pytest.mark.parametrize(
    ("value", "message"),
    [(True, r"\(bool\)"), (None, r"\(NoneType\)"), (math.inf, "not finite")],
)
def test_rejects_non_numbers(value: object, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        evaluate(value, {})  # type: ignore[arg-type]


def test_expression_error_is_a_value_error() -> None:
    assert issubclass(ExpressionError, ValueError)
