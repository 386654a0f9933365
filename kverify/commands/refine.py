"""`kverify refine`: check that the implementation world refines the abstract model, step by step.

Seeded random walks over the world (walk i uses seed S+i) until N implementation steps in total;
every step must map to a step (or a stutter) of the abstract model (model/refine.py). The world runs
with its mapping's WALK_DEFAULTS (lost messages included) unless --param overrides them: group-world against
`group` (model/refine.py), consumer-group-world against `consumer-group` (model/worlds/consumer_group_refine.py). Prints the
first step that does not, with the walk's seed and trace (exit 1), or "N steps, 0 mismatches"
(exit 0). Bad world names, parameters or behaviours are one-line errors (exit 2).
"""
from __future__ import annotations

from kverify.cli import UsageError, emit_json
from kverify.model import registry
from kverify.model.protocol import action_label

NAME = "refine"
HELP = "random walks of the impl world checked against the abstract model (refinement)"
# world -> the module holding its refinement mapping (refinement_params, WALK_DEFAULTS, RefinementError, run)
WORLDS = {"group-world": "kverify.model.refine",
          "consumer-group-world": "kverify.model.worlds.consumer_group_refine"}


def add_arguments(parser):
    parser.add_argument("--world", default="group-world", help=f"world to check ({', '.join(WORLDS)})")
    parser.add_argument("--steps", type=int, default=10_000, help="implementation steps in total (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first walk (walk i uses seed+i)")
    parser.add_argument("--walk-length", type=int, default=200, help="steps per walk at most (default 200)")
    parser.add_argument("--param", action="append", default=[], metavar="K=V", help="world parameter (repeatable)")
    parser.add_argument("--behaviour", action="append", default=[], metavar="NAME",
                        help="switch a historical behaviour on in the world (repeatable)")


def run(args) -> int:
    import importlib

    if args.world not in WORLDS:
        raise UsageError(f"no refinement mapping for world {args.world!r}; known: {', '.join(WORLDS)}")
    if args.steps <= 0:
        raise UsageError(f"--steps must be positive, got {args.steps}")
    if args.walk_length <= 0:
        raise UsageError(f"--walk-length must be positive, got {args.walk_length}")
    refine = importlib.import_module(WORLDS[args.world])
    try:
        params = refine.refinement_params(registry.parse_kv(args.param), refine.WALK_DEFAULTS)
        world = registry.build(args.world, params, args.behaviour)
    except refine.RefinementError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:
        raise UsageError(str(exc).splitlines()[0]) from None
    res = refine.run(world, args.steps, args.seed, walk_length=args.walk_length)
    if args.json:
        out = {"world": args.world, "params": {k: world.params[k] for k in sorted(world.params)},
               "behaviours": sorted(world.behaviours), **res.to_json()}
        emit_json(out)
    else:
        print(f"refine {args.world} seed={args.seed} behaviours={','.join(sorted(world.behaviours)) or 'none'}")
        if res.mismatch is None:
            print(f"{res.steps} steps, 0 mismatches ({res.walks} walks, {res.seconds:.1f} s, "
                  f"{res.steps / max(res.seconds, 1e-9):,.0f} steps/s; {res.stutters} stutters)")
        else:
            print(f"mismatch at step {res.mismatch.step_index} of walk seed {res.walk_seed} "
                  f"(after {res.steps} steps in total): {res.mismatch.message}")
            print("trace: " + " ".join(action_label(a) for a in res.trace))
    return 0 if res.mismatch is None else 1
