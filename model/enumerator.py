"""A table's `enabled` compiled into one function: the guards' bodies inlined, no call per guard.

Why it exists: `ActionTable.enabled` calls one guard per action and candidate argument (about 40
calls per state of the group model), which made `actions()` ~8x slower than the hand-written loop
it replaced and the explorer ~20% slower. The rules stay written once, as named guards; this module
reads each guard's source and, when it is a plain sequence of assignments to local names followed by
one `return EXPR` (no other statements, no closure), writes one function that enumerates the actions
in table order with the guard's statements inlined (its locals renamed apart). A guard of any other
shape is called as before. Same results in the same order (tests/test_search_enumerator.py checks
every registered model's table against the plain enumeration on reachable states).
"""
from __future__ import annotations

import ast
import inspect
import textwrap
import types
from typing import Callable, Optional

_P, _S, _APP = "_kv_proto", "_kv_state", "_kv_append"


def _inlinable(guard) -> Optional[tuple]:
    """(params, statements, return expression) of a guard written as assignments + one return."""
    if not isinstance(guard, types.FunctionType) or guard.__code__.co_freevars:
        return None
    try:
        fn = ast.parse(textwrap.dedent(inspect.getsource(guard))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list or fn.args.vararg or fn.args.kwarg \
            or fn.args.kwonlyargs or fn.args.defaults or fn.args.posonlyargs:
        return None
    body = [b for b in fn.body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    for st in body[:-1]:
        if not (isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets)):
            return None
    for node in ast.walk(fn):
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
                             ast.NamedExpr, ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await)):
            return None          # scoping the inliner does not handle: keep the call
    return [a.arg for a in fn.args.args], body[:-1], body[-1].value


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        new = self.mapping.get(node.id)
        return ast.copy_location(ast.Name(new, node.ctx), node) if new else node


def compile_enabled(actions) -> Optional[Callable]:
    """`enabled(proto, state) -> [(name, *args)]` for `actions` (a sequence of model/actions.py
    `Action`) with the inlinable guards inlined; None when no guard can be inlined or the guards do
    not share one module (their globals)."""
    shapes = [_inlinable(a.guard) for a in actions]
    if not any(shapes):
        return None
    module_globals = {id(a.guard.__globals__): a.guard.__globals__ for a, sh in zip(actions, shapes) if sh}
    if len(module_globals) != 1:
        return None
    glob = next(iter(module_globals.values()))
    stmts: list = [ast.parse(f"{_APP} = _kv_out.append").body[0]]
    defaults: dict = {}
    for i, (a, shape) in enumerate(zip(actions, shapes)):
        dom, name = f"_kv_dom{i}", f"_kv_name{i}"
        defaults[dom], defaults[name] = a.domain, a.name
        args = f"_kv_args{i}"
        if shape is None:
            defaults[f"_kv_guard{i}"] = a.guard
            loop = ast.parse(f"for {args} in {dom}({_P}, {_S}):\n"
                             f"    if _kv_guard{i}({_P}, {_S}, *{args}):\n"
                             f"        {_APP}(({name}, *{args}))").body[0]
            stmts.append(loop)
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
        extra = params[2:]
        if extra:
            target = "(" + ", ".join(mapping[p] for p in extra) + ",)"
            record = f"({name}, " + ", ".join(mapping[p] for p in extra) + ")"
        else:
            target, record = "_kv_unused", f"({name},)"
        loop = ast.parse(f"for {target} in {dom}({_P}, {_S}):\n    pass").body[0]
        inner = [_Rename(mapping).visit(ast.parse(ast.unparse(st)).body[0]) for st in body]
        test = _Rename(mapping).visit(ast.parse(ast.unparse(expr), mode="eval").body)
        inner.append(ast.If(test=test, body=[ast.parse(f"{_APP}({record})").body[0]], orelse=[]))
        loop.body = inner
        stmts.append(loop)
    stmts.append(ast.parse("return _kv_out").body[0])
    arg_names = list(defaults)
    src_args = ", ".join([_P, _S] + [f"{k}=None" for k in arg_names])
    fn = ast.parse(f"def _kv_enabled({src_args}):\n    _kv_out = []").body[0]
    fn.body.extend(stmts)
    module = ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))
    code = compile(module, "<compiled ActionTable.enabled>", "exec")
    fcode = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    return types.FunctionType(fcode, glob, "enabled", tuple(defaults[k] for k in arg_names))
