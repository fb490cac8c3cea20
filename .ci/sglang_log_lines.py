"""The startup lines an SGLang release's own sources log, for mlagen watch's
rules to be held to (watch/sglanglog's TestReleaseLogLines).

    python3 .ci/sglang_log_lines.py SGLANG_DIR > lines.txt

Walks every .py file under SGLANG_DIR (the `sglang` package of an unpacked
wheel) and finds each string that a call is given (a log call's message,
an exception's text) and that mentions weight loading, graph capture, the
server being ready or SIGQUIT. Each is rendered as the log would show it:
an f-string's fields from the enclosing function's own string assignments
where they come from one (`capture_name = f"{role} decode"`, every branch
of it), "CUDA graph" for `graph_backend[...]`, a list for a batch list (a
name ending in `bs` or `num_tokens`), 12.34 for a float field, 1
otherwise; a %-format message the same way. Prints `PATH:LINE<TAB>TEXT`,
one rendering a line; and for the scheduler's log prefix (the rank tags
it adds, `DP1 ATTN_CP1 TP1 ...`) `PATH:LINE<TAB>prefix<TAB>LINE`, a whole
line with every tag, its stamp with and without milliseconds. Exits 1 if
it finds nothing.
"""

import ast
import os
import re
import sys

WANTED = re.compile(
    r"(?i)load weight (?:begin|end)|capture .*graph|fired up and ready|sigquit"
)
LIMIT = 64  # renderings of one string, at most


def renderings(node, env):
    """Every text the string expression `node` can take, or [] where it is
    not a string expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        texts = [""]
        for part in node.values:
            if isinstance(part, ast.Constant):
                options = [str(part.value)]
            else:
                options = field(part, env)
            texts = [t + o for t in texts for o in options][:LIMIT]
        return texts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = renderings(node.left, env), renderings(node.right, env)
        return [a + b for a in left for b in right][:LIMIT]
    if isinstance(node, ast.IfExp):
        return (renderings(node.body, env) + renderings(node.orelse, env))[:LIMIT]
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    return []


def field(part, env):
    """What an f-string field shows: its variable's own renderings where the
    function assigned it a string, else a placeholder of the field's kind."""
    expr = part.value
    if isinstance(expr, ast.Name) and expr.id in env:
        return env[expr.id]
    source = ast.unparse(expr)
    if source.startswith("graph_backend["):
        return ["CUDA graph"]
    last = re.split(r"[.\[(]", source.rstrip(")]"))[-1]
    if last.endswith("bs") or last.endswith("num_tokens"):
        return ["[1, 2, 4, 8]"]
    spec = ast.unparse(part.format_spec) if part.format_spec else ""
    if spec.endswith("f'") or spec.endswith('f"'):
        return ["12.34"]
    return ["1"]


def percent(text):
    """A %-format message with its conversions filled in."""
    text = re.sub(r"%(?:\.\d+)?f", "12.34", text)
    return re.sub(r"%[sdr]", "1", text)


def assignments(func):
    """name -> renderings, for the names the function assigns strings to,
    in source order (so that a later field sees an earlier name's values)."""
    env = {}
    for node in sorted(
        (n for n in ast.walk(func) if isinstance(n, ast.Assign)),
        key=lambda n: (n.lineno, n.col_offset),
    ):
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        texts = renderings(node.value, env)
        if texts:
            name = node.targets[0].id
            env[name] = (env.get(name, []) + texts)[:LIMIT]
    return env


class Calls(ast.NodeVisitor):
    """Each call's wanted renderings, with the string assignments of the
    innermost function around it (none at module level)."""

    def __init__(self):
        self.envs = [{}]
        self.found = []

    def visit_FunctionDef(self, node):
        self.envs.append(assignments(node))
        self.generic_visit(node)
        self.envs.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node):
        texts = []
        for arg in node.args:
            texts += renderings(arg, self.envs[-1])
        for t in texts:
            if WANTED.search(t):
                self.found.append((node.lineno, percent(t) if "%" in t else t))
        self.generic_visit(node)


# A file that has none of these words cannot render a wanted line: most of
# the tree is skipped unparsed.
MENTIONS = re.compile(rb"(?i)load weight|fired up|capture|sigquit")


def parse(path):
    """The file's syntax tree, or None where it cannot render a wanted line
    (none of the words) or is not Python this interpreter reads."""
    with open(path, "rb") as f:
        data = f.read()
    if not MENTIONS.search(data):
        return None
    try:
        return ast.parse(data, path)
    except (SyntaxError, ValueError):
        return None


def lines_of(tree):
    calls = Calls()
    calls.visit(tree)
    return calls.found


def rank_tags(tree):
    """The rank tags a scheduler puts in its log prefix: the `prefix +=
    f" DP{...}"` pieces of a function that passes `prefix=prefix` to
    configure_logger, each rendered with rank 1."""
    tags = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        configures = any(
            isinstance(c, ast.Call)
            and ast.unparse(c.func).endswith("configure_logger")
            and any(k.arg == "prefix" for k in c.keywords)
            for c in ast.walk(func)
        )
        if not configures:
            continue
        for node in ast.walk(func):
            if (
                isinstance(node, ast.AugAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == "prefix"
                and isinstance(node.op, ast.Add)
            ):
                for text in renderings(node.value, {}):
                    tags.append((node.lineno, text.strip()))
    return tags


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: sglang_log_lines.py SGLANG_DIR")
    root = sys.argv[1]
    found = 0
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(d, name)
            tree = parse(path)
            if tree is None:
                continue
            if name == "scheduler.py":
                tags = rank_tags(tree)
                if tags:
                    # One prefix with every tag, as configure_logger writes
                    # it, without and with SGLANG_LOG_MS's milliseconds.
                    where = f"{os.path.relpath(path, root)}:{tags[0][0]}"
                    joined = " ".join(t for _, t in tags)
                    for stamp in ("2026-06-17 22:07:05", "2026-06-17 22:07:05.123"):
                        print(f"{where}\tprefix\t[{stamp} {joined}] x")
                        found += 1
            for lineno, text in lines_of(tree):
                # One line of the log: the first line of a multi-line text.
                first = text.splitlines()[0] if text else text
                print(f"{os.path.relpath(path, root)}:{lineno}\t{first}")
                found += 1
    if not found:
        sys.exit(f"no startup line found under {root}")


if __name__ == "__main__":
    main()
