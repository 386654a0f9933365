"""A table's `enabled` compiled into one function: the guards' bodies inlined, no call per guard.

Why it exists: `ActionTable.enabled` calls one guard per action and candidate argument (about 40
calls per state of the group model), which made `actions()` ~8x slower than the hand-written loop
it replaced and the explorer ~20% slower. The rules stay written once, as named guards; this module
reads each guard's source and, when it is a plain sequence of assignments to local names followed by
one `return EXPR` (no other statements, no closure, its parameters never reassigned), writes one
function that enumerates the actions in table order with the guard's statements inlined (its locals
renamed apart). A guard of any other shape is called as before. In the compiled function

- each distinct domain function is called once per state (its result shared by the actions that
  name it: a domain is a pure function of the model and the state, as guards are); a domain written
  as one `return EXPR` in the guards' module is inlined, and when several such domains read an
  attribute of one compound expression (`(m.domains_of if m.domains_for is s else m.domains(s)).leaders`)
  that expression is computed once per state into a local,
- an attribute chain read more than once from the model or the state (`s.budget.events`,
  `m.max_gen`) is read once, before the first action; should reading one raise (a chain a guard only
  reads behind a test, `s.prev.record`), that state is enumerated by the same function without this
  hoisting, so every exception is the one the guards raise,
- a call of a helper of the same module written as one `return EXPR`, with plain names as arguments
  (`may_propose(m, s, rep, r)`), is replaced by EXPR over those names,
- `bool(x)` is dropped where only the truth of the test is used,
- an action declared `domain_enabled` (its domain yields only arguments its guard accepts: a composed
  model enumerating its inner model's table) appends its domain's arguments without testing the guard
  (with `domain_actions`, the domain's actions as they are, in one `extend`);
  a domain that is a closure over constants (`def domain(m, s): return ....get(name, ())`) is inlined
  with the constants in place, and a compound `X` that several domains call a method of (`X.get(...)`)
  is computed once per state like a shared attribute base.

Same results in the same order (tests/test_search_enumerator.py checks every registered model's table
against the plain enumeration on reachable states).

Its own cost is paid once per table and process, inside the first search (a small bound's whole run
is a few hundred ms): each function's lines are read through linecache and parsed once (no
tokenizer), trees are copied and renamed in one pass, templates parsed once, and the function
without hoisting is compiled only when a state first needs it.
"""
from __future__ import annotations

import ast
import linecache
import re
import textwrap
import types
import weakref
from typing import Callable, Optional

_P, _S, _APP = "_kv_proto", "_kv_state", "_kv_append"
_UNSAFE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Global,
           ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)
# A source without these words has none of those nodes (each is written with one), so its tree need not be walked.
_UNSAFE_WORDS = re.compile(r"\b(lambda|for|global|nonlocal|yield|await)\b|:=")


_SHAPES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # function -> {constants: shape}


def _source(code) -> Optional[str]:
    """The lines of a function's definition (its code object): from its first line to the last line
    indented deeper (read through linecache, without tokenizing: a block cut in the middle of a
    construct does not parse, and the caller then keeps the call)."""
    lines = linecache.getlines(code.co_filename)
    start = code.co_firstlineno - 1
    if not 0 <= start < len(lines):
        return None
    first = lines[start]
    indent = len(first) - len(first.lstrip())
    end = start + 1
    while end < len(lines):
        line = lines[end]
        text = line.lstrip()
        if text and not text.startswith("#") and len(line) - len(text) <= indent:
            break
        end += 1
    return "".join(lines[start:end])


def _inlinable(guard, constants: bool = False) -> Optional[tuple]:
    """(params, statements, return expression) of a guard written as assignments + one return. With
    `constants`, a closure whose cells hold constants (a name, a number) is accepted, the cells
    replaced by their values. Read-only AST (callers copy before they transform); kept per function."""
    if not isinstance(guard, types.FunctionType):
        return None
    per = _SHAPES.get(guard)
    if per is None:
        per = _SHAPES[guard] = {}
    if constants not in per:
        per[constants] = _shape(guard, constants)
    return per[constants]


def _parsed(code) -> Optional[tuple]:
    """(source, first statement of its parse) of a function's code, read once per code object (the
    closures one function makes share it); None when its lines do not parse."""
    if code not in _PARSED:
        src = _source(code)
        try:
            _PARSED[code] = None if src is None else (src, ast.parse(textwrap.dedent(src)).body[0])
        except (SyntaxError, IndexError, ValueError):
            _PARSED[code] = None
    return _PARSED[code]


_PARSED: dict = {}


def _shape(guard, constants: bool) -> Optional[tuple]:
    cells = {}
    if guard.__code__.co_freevars:
        if not constants:
            return None
        try:
            cells = {k: c.cell_contents for k, c in zip(guard.__code__.co_freevars, guard.__closure__)}
        except ValueError:       # an empty cell
            return None
        if not all(v is None or type(v) in (str, int, bool) for v in cells.values()):
            return None
    parsed = _parsed(guard.__code__)
    if parsed is None:
        return None
    src, fn = parsed
    if cells:
        fn = _Constants(cells).visit(_copy(fn))
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list or fn.args.vararg or fn.args.kwarg \
            or fn.args.kwonlyargs or fn.args.defaults or fn.args.posonlyargs:
        return None
    body = [b for b in fn.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    params = [a.arg for a in fn.args.args]
    for st in body[:-1]:
        if not (isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) and t.id not in params
                                                   for t in st.targets)):
            return None          # a parameter reassigned would change the next actions' state
    if _UNSAFE_WORDS.search(src) and any(isinstance(node, _UNSAFE) for node in _nodes(fn)):
        return None              # scoping the inliner does not handle: keep the call
    return params, body[:-1], body[-1].value


def _domain_expr(domain, glob: dict):
    """A domain function written as one `return EXPR` of `(model, state)`, in this module's globals:
    EXPR with the parameters renamed to the compiled function's; None (the domain is called)."""
    if getattr(domain, "__globals__", None) is not glob:
        return None
    shape = _inlinable(domain, constants=True)
    if shape is None or shape[1] or len(shape[0]) != 2:
        return None
    params, _body, expr = shape
    return _copy(expr, {params[0]: _P, params[1]: _S})


def _copy(node, names: Optional[dict] = None):
    """A fresh copy of an AST (no source positions: the compiled function's are filled in), which the
    transformers below may change in place, with the names in `names` renamed on the way."""
    if isinstance(node, ast.AST):
        if names and node.__class__ is ast.Name and node.id in names:
            return ast.Name(names[node.id], _copy(node.ctx))
        new = node.__class__.__new__(node.__class__)
        for name in node._fields:
            setattr(new, name, _copy(getattr(node, name, None), names))
        return new
    if node.__class__ is list:
        return [_copy(x, names) for x in node]
    return node


class _Transformer(ast.NodeTransformer):
    """ast.NodeTransformer with its `visit_*` method looked up once per node class, and a child walk
    over `_fields` (this walk is most of the compilation's cost). The transformers here return a
    node for every node (never None, never a list)."""

    def visit(self, node):
        key = (self.__class__, node.__class__)
        method = _METHODS.get(key)
        if method is None:
            method = _METHODS[key] = getattr(self.__class__, "visit_" + node.__class__.__name__,
                                             _Transformer.generic_visit)
        return method(self, node)

    def generic_visit(self, node):
        for name in node._fields:
            old = getattr(node, name, None)
            if old.__class__ is list:
                old[:] = [self.visit(x) if isinstance(x, ast.AST) else x for x in old]
            elif isinstance(old, ast.AST):
                setattr(node, name, self.visit(old))
        return node


_METHODS: dict = {}


def _nodes(tree) -> list:
    """Every node of `tree` (ast.walk's nodes, in another order)."""
    out = [tree]
    for node in out:          # (the list grows while it is read)
        for name in node._fields:
            v = getattr(node, name, None)
            if v.__class__ is list:
                out.extend([x for x in v if isinstance(x, ast.AST)])
            elif isinstance(v, ast.AST):
                out.append(v)
    return out


def _locate(tree):
    """Line 1, column 0 on every node that has a position and lacks it (ast.fix_missing_locations,
    in one walk: the compiled function has no source to point at)."""
    for node in _nodes(tree):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = 1, 0, 1, 0
    return tree


def _template(src: str, **names) -> ast.stmt:
    """A statement parsed once per template text, copied, with its placeholder names replaced."""
    tree = _TEMPLATES.get(src)
    if tree is None:
        tree = _TEMPLATES[src] = ast.parse(src).body[0]
    return _copy(tree, names)


_TEMPLATES: dict = {}


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id_, ast.Store() if store else ast.Load())


class _Constants(_Transformer):
    """Reads of a closure's cells replaced by the constants they hold."""

    def __init__(self, cells: dict):
        self.cells = cells

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.cells:
            return ast.copy_location(ast.Constant(self.cells[node.id]), node)
        return node


def _compound(expr) -> Optional[ast.Attribute]:
    """The attribute read of a domain `X.attr` or `X.method(...)` whose `X` is not a plain name (its
    `X` may be shared by several domains), else None."""
    node = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(node, ast.Attribute) and not isinstance(node.value, ast.Name):
        return node
    return None


class _Helpers(_Transformer):
    """Calls of a helper of the guards' module written as one `return EXPR` (no closure), whose
    arguments are plain names, replaced by EXPR with its parameters renamed to those names
    (`may_propose(m, s, rep, r)`): a name is evaluated alike wherever it appears, so this changes
    no value and no exception, only the cost of a call."""

    def __init__(self, glob: dict, depth: int = 0):
        self.glob, self.depth = glob, depth

    def visit_Call(self, node: ast.Call):
        node = self.generic_visit(node)
        fn = self.glob.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if (self.depth >= 3 or not isinstance(fn, types.FunctionType) or fn.__globals__ is not self.glob
                or node.keywords or not all(isinstance(a, ast.Name) for a in node.args)):
            return node
        shape = _inlinable(fn)
        if shape is None or shape[1] or len(shape[0]) != len(node.args):
            return node
        params, _body, expr = shape
        body = _copy(expr, dict(zip(params, (a.id for a in node.args))))
        return ast.copy_location(_Helpers(self.glob, self.depth + 1).visit(body), node)


def _truth(node, glob: dict):
    """`node` in a test position with `bool(x)` replaced by `x` (the builtin only)."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool"
            and "bool" not in glob and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], ast.Starred)):
        return _truth(node.args[0], glob)
    if isinstance(node, ast.BoolOp):
        node.values = [_truth(v, glob) for v in node.values]
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node.operand = _truth(node.operand, glob)
    return node


def _chain(node) -> Optional[tuple]:
    """('_kv_proto' | '_kv_state', attr, ...) for a read of an attribute chain of the model or state."""
    parts = []
    while isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        parts.append(node.attr)
        node = node.value
    if parts and isinstance(node, ast.Name) and node.id in (_P, _S):
        return (node.id, *reversed(parts))
    return None


class _Hoisted(_Transformer):
    def __init__(self, names: dict):
        self.names = names

    def visit_Attribute(self, node: ast.Attribute):
        name = self.names.get(_chain(node))
        if name is not None:
            return ast.copy_location(ast.Name(name, ast.Load()), node)
        return self.generic_visit(node)


class _Aliased(_Transformer):
    """Reads of a guard's local that holds an attribute chain of the model or state (`c = s.controller`)
    replaced by that chain (`s.controller.isr` for `c.isr`), so that hoisting sees it; the assignment
    stays where it was, so a read that raises still raises there. The chain reads immutable values
    (a state, the model's bounds), so reading it again gives the same value."""

    def __init__(self, aliases: dict):
        self.aliases = aliases

    def visit_Name(self, node: ast.Name):
        chain = self.aliases.get(node.id) if isinstance(node.ctx, ast.Load) else None
        return node if chain is None else _copy(chain)


def _key(node):
    """A hashable value equal for equal trees (what ast.dump tells apart, without formatting it)."""
    if isinstance(node, ast.AST):
        return (node.__class__, *[_key(getattr(node, name, None)) for name in node._fields])
    if node.__class__ is list:
        return tuple([_key(x) for x in node])
    return node


def _loops(actions, shapes, glob: dict) -> tuple:
    """(domain statements, one loop per action, default values) of the compiled function."""
    defaults: dict = {}
    domain_of: dict = {}          # id(domain function) -> local holding its arguments
    uses: dict = {}
    exprs: dict = {}              # id(domain function) -> its inlined expression (None: called)
    for a in actions:
        uses[id(a.domain)] = uses.get(id(a.domain), 0) + 1
        if id(a.domain) not in exprs:
            exprs[id(a.domain)] = _domain_expr(a.domain, glob)
    bases: dict = {}              # _key of a compound `X` in `X.attr` -> how many domains read it
    for e in exprs.values():
        node = _compound(e) if e is not None else None
        if node is not None:
            key = _key(node.value)
            bases[key] = bases.get(key, 0) + 1
    base_of: dict = {}            # _key -> local holding it, once computed
    head: list = []
    loops: list = []
    for i, (a, shape) in enumerate(zip(actions, shapes)):
        dom = domain_of.get(id(a.domain))
        if dom is None:
            dom = domain_of[id(a.domain)] = f"_kv_dom{len(domain_of)}"
            expr = exprs[id(a.domain)]
            if expr is None:
                defaults[f"{dom}_fn"] = a.domain
                head.append(_template(f"DOM = FN({_P}, {_S})", DOM=dom, FN=f"{dom}_fn"))
            else:
                node = _compound(expr)
                key = _key(node.value) if node is not None else None
                if key is not None and bases.get(key, 0) > 1:     # shared by several domains: computed once
                    base = base_of.get(key)
                    if base is None:
                        base = base_of[key] = f"_kv_dbase{len(base_of)}"
                        head.append(ast.Assign(targets=[ast.Name(base, ast.Store())], value=node.value))
                    node.value = ast.Name(base, ast.Load())
                head.append(ast.Assign(targets=[ast.Name(dom, ast.Store())], value=expr))
            if uses[id(a.domain)] > 1:     # iterated more than once: a generator would be spent
                defaults["_kv_tuple"], defaults["_kv_list"] = tuple, list
                head.append(_template("if DOM.__class__ is not _kv_tuple and DOM.__class__ is not _kv_list:\n"
                                      "    DOM = _kv_tuple(DOM)", DOM=dom))
        name = f"_kv_name{i}"
        defaults[name] = a.name
        args = f"_kv_args{i}"
        if a.domain_enabled and a.domain_actions:     # the domain holds the enabled actions themselves
            loops.append(_template("_kv_out += DOM", DOM=dom))
            continue
        if a.domain_enabled:         # the domain holds only enabled arguments: no guard to test
            loops.append(_template(f"for ARGS in DOM:\n    {_APP}((NAME, *ARGS))", ARGS=args, DOM=dom, NAME=name))
            continue
        if shape is None:
            defaults[f"_kv_guard{i}"] = a.guard
            loops.append(_template(f"for ARGS in DOM:\n    if GUARD({_P}, {_S}, *ARGS):\n        {_APP}((NAME, *ARGS))",
                                   ARGS=args, DOM=dom, NAME=name, GUARD=f"_kv_guard{i}"))
            continue
        params, body, expr = shape
        if len(params) < 2:
            return None
        mapping = {params[0]: _P, params[1]: _S}
        for p in params[2:]:
            mapping[p] = f"_kv_a{i}_{p}"
        for st in body:
            for t in st.targets:
                mapping.setdefault(t.id, f"_kv_l{i}_{t.id}")
        extra = [mapping[p] for p in params[2:]]
        target = (ast.Tuple([_name(x, True) for x in extra], ast.Store()) if extra else _name("_kv_unused", True))
        record = ast.Tuple([_name(name)] + [_name(x) for x in extra], ast.Load())
        inner, aliases = [], {}
        for st in body:
            st = _Helpers(glob).visit(_copy(st, mapping))
            st.value = _Aliased(aliases).visit(st.value)
            if len(st.targets) == 1 and _chain(st.value) is not None:
                aliases[st.targets[0].id] = st.value
            inner.append(st)
        test = _truth(_Aliased(aliases).visit(_Helpers(glob).visit(_copy(expr, mapping))), glob)
        inner.append(ast.If(test=test, body=[ast.Expr(ast.Call(_name(_APP), [record], []))], orelse=[]))
        loops.append(ast.For(target=target, iter=_name(dom), body=inner, orelse=[]))
    return head, loops, defaults


def _hoist(loops: list) -> tuple:
    """(assignments, loops) with every attribute chain read twice or more read once into a local."""
    counts: dict = {}
    for loop in loops:
        for node in _nodes(loop):
            ch = _chain(node) if isinstance(node, ast.Attribute) else None
            if ch is not None:
                counts[ch] = counts.get(ch, 0) + 1
    chains = sorted((ch for ch, k in counts.items() if k > 1), key=lambda ch: (len(ch), ch))
    names = {ch: f"_kv_h{k}" for k, ch in enumerate(chains)}
    assigns = []
    for ch in chains:
        expr = _name(ch[0])
        for attr in ch[1:]:
            expr = ast.Attribute(expr, attr, ast.Load())
        expr.value = _Hoisted(names).visit(expr.value)
        assigns.append(ast.Assign(targets=[ast.Name(names[ch], ast.Store())], value=expr))
    return assigns, [_Hoisted(names).visit(loop) for loop in loops]


def _function(body: list, defaults: dict, glob: dict, label: str):
    arg_names = list(defaults)
    src_args = ", ".join([_P, _S] + [f"{k}=None" for k in arg_names])
    fn = ast.parse(f"def _kv_enabled({src_args}):\n    _kv_out = []\n    {_APP} = _kv_out.append").body[0]
    fn.body.extend(body)
    fn.body.append(ast.parse("return _kv_out").body[0])
    module = _locate(ast.Module(body=[fn], type_ignores=[]))
    code = compile(module, f"<compiled ActionTable.enabled{label}>", "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(fcode, glob, "enabled", tuple(defaults[k] for k in arg_names))


def compile_enabled(actions) -> Optional[Callable]:
    """`enabled(proto, state) -> [(name, *args)]` for `actions` (a sequence of model/actions.py
    `Action`) with the inlinable guards inlined; None when no guard can be inlined or the guards do
    not share one module (their globals)."""
    shapes = [None if a.domain_enabled else _inlinable(a.guard) for a in actions]
    if not any(shapes):
        return None
    module_globals = {id(a.guard.__globals__): a.guard.__globals__ for a, sh in zip(actions, shapes) if sh}
    if len(module_globals) != 1:
        return None
    glob = next(iter(module_globals.values()))
    built = _loops(actions, shapes, glob)
    if built is None:
        return None
    head, loops, defaults = built
    assigns, hoisted_loops = _hoist(loops)
    if not assigns:
        return _function(head + loops, defaults, glob, "")
    guard = ast.Try(body=assigns, handlers=[ast.ExceptHandler(
        type=_name("Exception"), name=None, body=[_template(f"return _kv_unhoisted({_P}, {_S})")])],
        orelse=[], finalbody=[])
    plain = _Later(lambda: _function(*_unhoisted(actions, shapes, glob), glob, ""))
    return _function(head + [guard] + hoisted_loops, {**defaults, "_kv_unhoisted": plain}, glob, " (hoisted)")


def _unhoisted(actions, shapes, glob: dict) -> tuple:
    """(body, defaults) of the function without hoisting (built again: `_hoist` changed the first)."""
    head, loops, defaults = _loops(actions, shapes, glob)
    return head + loops, defaults


class _Later:
    """The unhoisted function, compiled the first time a state needs it (most runs never do)."""

    __slots__ = ("build", "fn")

    def __init__(self, build):
        self.build, self.fn = build, None

    def __call__(self, proto, state):
        if self.fn is None:
            self.fn = self.build()
        return self.fn(proto, state)
