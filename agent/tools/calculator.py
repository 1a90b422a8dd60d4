"""A calculator that evaluates arithmetic by walking the AST (never `eval`)."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from langchain_core.tools import tool

from agent.steps import ToolFailed

MAX_EXPONENT = 10_000
MAX_MAGNITUDE = 1e300
MAX_EXPRESSION_CHARS = 500

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
_REPLACEMENTS = {"×": "*", "÷": "/", "^": "**", "−": "-", ",": ""}


class CalculatorError(ToolFailed):
    """An expression the calculator refuses or cannot evaluate (`why` names the step:
    division_by_zero, too_large, not_real, too_long or invalid)."""

    def __init__(self, why: str, message: str) -> None:
        super().__init__(f"calculator.{why}", message)


def _check_size(value: Any) -> Any:
    """Refuse results too large to be useful (and too slow to print)."""
    if isinstance(value, complex):
        raise CalculatorError("not_real", "the result is not a real number")
    if isinstance(value, int) and value.bit_length() > 4000:
        raise CalculatorError("too_large", "the result is too large")
    if isinstance(value, float) and (math.isinf(value) or abs(value) > MAX_MAGNITUDE):
        raise CalculatorError("too_large", "the result is too large")
    return value


def _power(base: Any, exponent: Any) -> Any:
    """Raise `base` to `exponent` unless the result would be enormous."""
    if abs(exponent) > MAX_EXPONENT or (
        abs(base) > 1 and abs(exponent) * math.log2(abs(base)) > 4000
    ):
        raise CalculatorError("too_large", "the result is too large")
    return base**exponent


def _evaluate(node: ast.AST) -> Any:
    """Evaluate one node of a parsed arithmetic expression."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            return _check_size(_power(left, right))
        return _check_size(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        function = _FUNCTIONS.get(node.func.id)
        if function is not None:
            return _check_size(function(*(_evaluate(arg) for arg in node.args)))
    raise CalculatorError("invalid", f"unsupported expression: {ast.dump(node)[:60]}")


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression and return the result as text."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculatorError("too_long", "the expression is too long")
    text = expression.strip().rstrip("=?").strip()
    for old, new in _REPLACEMENTS.items():
        text = text.replace(old, new)
    try:
        value = _evaluate(ast.parse(text, mode="eval"))
    except CalculatorError:
        raise
    except SyntaxError as exc:
        raise CalculatorError("invalid", f"invalid syntax in {expression!r}") from exc
    except ZeroDivisionError as exc:
        raise CalculatorError("division_by_zero", "division by zero") from exc
    except (TypeError, OverflowError, ValueError) as exc:
        raise CalculatorError("invalid", str(exc) or "cannot evaluate") from exc
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    if isinstance(value, float):
        value = round(value, 12)
    return str(value)


@tool
def calculator(expression: str) -> str:
    """Evaluate arithmetic, e.g. "123 * 456" or "sqrt(2)/3".

    Knows + - * / // % ** ^ ( ), pi, e, sqrt, abs, round, sin, cos, tan, log, exp.
    """
    return calculate(expression)
