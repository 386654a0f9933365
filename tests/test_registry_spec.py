"""The declared model specification (model/spec.py) and the registry that reads it: misspelt hooks fail at
import, the registry owns parsing, defaults and range errors, and every registered model declares a valid SPEC."""
import pytest

from kverify.model import registry
from kverify.model.spec import ModelError, ModelSpec, Param


def _make(params, behaviours):
    return ("built", params, behaviours)


SPEC = ModelSpec(name="toy", make=_make,
                 params={"members": Param(2, "members", lo=1, hi=8), "mode": Param("eager", "mode", choices=("eager", "coop")),
                         "ratio": Param(0.5, "a ratio", lo=0.0, hi=1.0), "fifo": Param(True, "fifo"),
                         "faults": (1, "an old-style (default, help) pair")},
                 supports={"b1"}, check=lambda p: "faults must be <= members" if p["faults"] > p["members"] else None,
                 walk_params={"members": 3}, hunt_params={"b1": {"faults": 2}})


def test_a_misspelt_hook_is_an_error_when_the_module_is_imported():
    with pytest.raises(TypeError, match="walk_param"):
        ModelSpec(name="toy", make=_make, walk_param={"members": 3})


def test_the_spec_parses_types_and_fills_defaults():
    assert SPEC.resolve({}) == {"members": 2, "mode": "eager", "ratio": 0.5, "fifo": True, "faults": 1}
    got = SPEC.resolve({"members": "5", "fifo": "off", "ratio": "1", "mode": "coop"})
    assert got == {"members": 5, "mode": "coop", "ratio": 1.0, "fifo": False, "faults": 1}
    assert SPEC.params["faults"][0] == 1 and SPEC.params["faults"].default == 1     # Param is still a pair
    assert SPEC.hunt_params == {"b1": ({"faults": 2}, None)}


@pytest.mark.parametrize("given,words", [
    ({"members": "9"}, "members=9 must be between 1 and 8"),
    ({"members": 0}, "members=0 must be between 1 and 8"),
    ({"members": "two"}, "is not a valid int"),
    ({"mode": "lazy"}, "must be one of eager, coop"),
    ({"fifo": "maybe"}, "is not a valid bool"),
    ({"fifo": 1.5}, "is not a valid bool"),
    ({"colour": "red"}, "has no parameter 'colour'; known: faults, fifo, members, mode, ratio"),
    ({"faults": 3}, "faults must be <= members"),
])
def test_bad_parameters_are_one_line_model_errors(given, words):
    with pytest.raises(ModelError) as err:
        SPEC.resolve(given)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_validate_refuses_an_inconsistent_declaration():
    with pytest.raises(ModelError, match="does not support"):
        ModelSpec(name="toy", make=_make, hunt_params={"b2": {}}).validate()
    with pytest.raises(ModelError, match="must be >= 1"):
        ModelSpec(name="toy", make=_make, params={"n": Param(0, "n", lo=1)}).validate()
    with pytest.raises(ModelError, match="no parameter"):
        ModelSpec(name="toy", make=_make, walk_params={"n": 1}).validate()


@pytest.mark.parametrize("name", registry.names())
def test_every_registered_model_declares_a_valid_spec(name):
    spec = registry.spec_for(name)               # validated when first loaded
    assert spec.name == name and callable(spec.make)
    assert registry.parse_params(name, {}) == spec.defaults()
    assert registry.supports(name) == spec.supports


def test_the_registry_hands_make_complete_validated_params():
    with pytest.raises(ModelError, match="members=9 must be between 1 and 8"):
        registry.build("group-world", {"members": "9"})
    with pytest.raises(ModelError, match="protocol='lazy' must be one of eager, cooperative"):
        registry.build("group-world", {"protocol": "lazy"})
    with pytest.raises(ModelError, match="rf must be between 1 and brokers"):
        registry.build("replication-world", {"brokers": 2, "rf": 3})
    with pytest.raises(ModelError, match="acks must be"):
        registry.build("replication-world", {"acks": "2"})
    p = registry.build("replication-world", {"brokers": "3"})
    assert p.params == registry.parse_params("replication-world", {"brokers": 3}) and p.n == 3
