"""`errkb link`: records take every copy of their message, except copies another record explains."""

from types import SimpleNamespace

from errkb.linking import copies_to_link


def test_copies_of_a_linked_template_are_added_unless_another_record_explains_them():
    sites = {sid: SimpleNamespace(template=t) for sid, t in
             [("a", "Unsupported group_size: {n}"), ("b", "Unsupported group_size: {n}"),
              ("c", "Unsupported group_size: {n}"), ("d", "something else")]}
    by_template = {"Unsupported group_size: {n}": ["a", "b", "c"], "something else": ["d"]}
    assert copies_to_link(["a"], sites, by_template) == ["b", "c"]
    assert copies_to_link(["a"], sites, by_template, claimed=frozenset({"c"})) == ["b"]
    assert copies_to_link(["missing"], sites, by_template) == []
