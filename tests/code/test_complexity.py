"""The complexity behind hotspots: lines × (1 + nesting by indentation) per outermost function."""

from __future__ import annotations

from nervapack_core.code.analysis.complexity import DEFAULT_STEP, file_complexity, function_nesting, indent_step

PYTHON = """\
def simple(x):
    return x


def nested(x):
    if x:
        for i in range(x):
            x += i
    return x
"""

JAVASCRIPT = """\
function f(a) {
  if (a) {
    while (a > 0) {
      a--;
    }
  }
  return a;
}
"""


def test_indent_step_is_the_most_common_increase():
    assert indent_step([0, 4, 8, 4, 0, 4]) == 4
    assert indent_step([0, 2, 4, 2, None, 0, 2]) == 2
    assert indent_step([0, 0, None, 0]) == DEFAULT_STEP  # never indents
    assert indent_step([0, 8, 0, 4, 0, 4]) == 4  # the most common, not the first


def test_python_functions_weighted_by_their_deepest_nesting():
    # simple: 2 lines, body at nesting 0 -> 2; nested: 5 lines, deepest body line 2 levels in -> 5 x 3
    assert file_complexity(PYTHON, [(1, 2), (5, 9)], 9) == (2 + 15, 2, 2)


def test_brace_languages_and_tabs_measure_the_same_way():
    # two-space indent; the closing brace at the function's own level is not negative nesting
    assert file_complexity(JAVASCRIPT, [(1, 8)], 8) == (8 * 3, 1, 2)
    tabs = JAVASCRIPT.replace("  ", "\t")
    assert file_complexity(tabs, [(1, 8)], 8) == (8 * 3, 1, 2)


def test_nested_functions_count_once_inside_their_outer_function():
    text = "def outer(x):\n    def inner(y):\n        return y\n    return inner(x)\n"
    # inner (2-3) is part of outer (1-4): 4 lines, deepest nesting 1
    assert file_complexity(text, [(2, 3), (1, 4)], 4) == (4 * 2, 1, 1)


def test_methods_are_measured_from_their_own_indentation():
    text = "class Box:\n    def get(self):\n        if self:\n            return 1\n        return 2\n"
    assert function_nesting([0, 4, 8, 12, 8], 2, 5, 4) == 1
    assert file_complexity(text, [(2, 5)], 5) == (4 * 2, 1, 1)


def test_a_file_without_functions_counts_its_lines():
    assert file_complexity("A = 1\nB = 2\n", [], 2) == (2, 0, 0)
    assert file_complexity("", [], 0) == (0, 0, 0)
