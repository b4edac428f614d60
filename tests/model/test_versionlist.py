"""How messages name many versions (issue 32, item 10): a range with a count, lowest first by version order."""

from stackresolve.model.versionlist import labels_span, version_span


def test_few_versions_are_listed_and_many_become_a_range():
    assert version_span(["2.4.1", "2.4.0"]) == "2.4.0, 2.4.1"
    assert version_span(["0.12.0.1", "0.4.26", "0.10.0", "0.4.30", "0.4.26"]) == "0.4.26 ... 0.12.0.1 (4 releases)"
    assert version_span(["1.15.0", "1.15.5+nv23.03", "1.15.2", "1.15.3"], inner=True) == \
        "4 releases: 1.15.0 ... 1.15.5+nv23.03"


def test_labels_are_summarised_per_name_and_variant():
    labels = [f"jax 0.4.{n}" for n in range(26, 39)] + ["torch 2.5.1 (cu124)", "NVIDIA's container 23.03-tf1-py3"]
    assert labels_span(labels) == "jax 0.4.26 ... 0.4.38 (13 releases), torch 2.5.1 (cu124), " \
                                  "NVIDIA's container 23.03-tf1-py3"
