"""The startup lines an SGLang release's own sources log, for mlagen watch's
rules to be held to (watch/sglanglog's TestReleaseLogLines).

    python3 .ci/sglang_log_lines.py SGLANG_DIR > lines.txt

Walks every .py file under SGLANG_DIR (the `sglang` package of an unpacked
wheel) and finds each string that a call is given (a log call's message,
an exception's text) and that mentions weight loading, graph capture, the
server being ready or SIGQUIT, or is a server's start (`server_args=`).
Each is rendered as the log would show it:
an f-string's fields from the enclosing function's own string assignments
where they come from one (`capture_name = f"{role} decode"`, every branch
of it), "CUDA graph" for `graph_backend[...]`, a list for a batch list (a
name ending in `bs` or `num_tokens`), 12.34 for a float field, 1
otherwise; a %-format message the same way. Prints `PATH:LINE<TAB>TEXT`,
one rendering a line; and for the scheduler's log prefix (the rank tags
it adds, `DP1 ATTN_CP1 TP1 ...`) `PATH:LINE<TAB>prefix<TAB>LINE`, a whole
line with every tag, its stamp with and without milliseconds. And for each
message a logger writes below an error's level with its traceback
(`logger.warning("...", exc_info=True)`: the server goes on)
`PATH:LINE<TAB>handled<TAB>TEXT`, each field that is not one of the
function's own strings shown as `{}`. Exits 1 if it finds nothing.
"""

import ast
import os
import re
import sys

WANTED = re.compile(
    r"(?i)load weight (?:begin|end)|capture .*graph|fired up and ready|sigquit"
    r"|^server_args="
)
# The levels at which a logged traceback is not a failure: logger.warning(
# "...", exc_info=True) writes its message, then the traceback, and goes on.
HANDLED_LEVELS = ("warning", "warn", "info", "debug")
# What a handled message's fields show: watch's list of handled messages
# (watch/sglanglog/handled.go) holds them in this form.
HOLE = "{}"
LIMIT = 64  # renderings of one string, at most


def renderings(node, env, hole=None):
    """Every text the string expression `node` can take, or [] where it is
    not a string expression. With hole, a field that is not one of the
    function's own strings shows as hole instead of a sample value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        texts = [""]
        for part in node.values:
            if isinstance(part, ast.Constant):
                options = [str(part.value)]
            else:
                options = [hole] if hole and not own(part, env) else field(part, env)
            texts = [t + o for t in texts for o in options][:LIMIT]
        return texts
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = renderings(node.left, env, hole), renderings(
            node.right, env, hole
        )
        return [a + b for a in left for b in right][:LIMIT]
    if isinstance(node, ast.IfExp):
        return (renderings(node.body, env, hole) + renderings(node.orelse, env, hole))[
            :LIMIT
        ]
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    return []


def own(part, env):
    """Whether an f-string field is a name the function assigned strings to."""
    return isinstance(part.value, ast.Name) and part.value.id in env


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


def percent(text, hole=None):
    """A %-format message with its conversions filled in (with hole, each
    one shows as hole)."""
    if hole:
        return re.sub(r"%(?:\.\d+)?[sdrf]", hole, text)
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
        if handled(node) and node.args:
            for t in renderings(node.args[0], self.envs[-1], HOLE):
                t = percent(t, HOLE) if "%" in t else t
                # The record's first line is what the log prefix heads.
                first = t.splitlines()[0] if t else t
                self.found.append((node.lineno, "handled\t" + first))
        self.generic_visit(node)


def handled(call):
    """Whether the call logs a traceback below an error's level: a logger's
    warning, info or debug with exc_info set."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in HANDLED_LEVELS):
        return False
    if "log" not in ast.unparse(func.value).lower():
        return False
    return any(
        k.arg == "exc_info"
        and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in call.keywords
    )


# A file that has none of these words cannot render a wanted line: most of
# the tree is skipped unparsed.
MENTIONS = re.compile(rb"(?i)load weight|fired up|capture|sigquit|server_args|exc_info")


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
