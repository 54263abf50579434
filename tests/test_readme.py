"""What the README tells a newcomer holds in a fresh clone: its links resolve, its figures are the committed ones."""

from __future__ import annotations

import json
import re

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
RESULTS = REPO / "evals" / "results"
SETS = ("real_runs", "synthetic", "holdout", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7",
        "holdout8", "holdout9", "holdout10", "holdout11", "holdout12", "holdout13", "holdout14", "holdout15",
        "holdout16", "holdout17", "holdout18", "holdout19", "holdout20", "holdout21", "holdout22", "holdout23",
        "holdout24", "holdout25", "holdout26", "holdout27", "holdout28", "holdout29", "holdout30", "holdout31",
        "holdout32", "holdout33", "holdout34", "holdout35", "holdout36", "holdout37", "holdout38", "holdout39")


def test_the_readme_needs_nothing_outside_the_repository():
    assert "../shared" not in README
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if re.match(r"[A-Za-z_.]", link) and not re.match(r"[a-z]+://", link)]
    assert "docs/DESIGN.md" in local
    missing = [link for link in local if not (REPO / link).exists()]
    assert missing == []


def test_the_design_is_in_the_repository_and_is_the_teams_copy():
    design = (REPO / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    assert "## " in design and "rollback" in design  # the contracts the README points to
    shared = REPO.parent / "shared" / "DESIGN.md"
    if shared.is_file():  # beside the team's folder, the copy must not have drifted from it
        assert design == shared.read_text(encoding="utf-8")


def rules(name: str) -> dict:
    report = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    return next(j for j in report["judges"] if j["judge"] == "rules")


def test_the_readme_figures_are_the_committed_results():
    caught = total = healthy = quiet = 0
    for name in SETS:
        judge = rules(name)
        for delay in (judge["delay_synthetic"], judge["delay_real"]):
            if delay:
                caught += delay["detected"]
                total += delay["cases"]
                healthy += delay["healthy_replayed"]
                quiet += delay["healthy_replayed"] - len(delay["healthy_runs_with_alarms"])
    assert f"catches {caught} of\n{total} failing runs" in README or f"catches {caught} of {total} failing runs" in \
        README.replace("\n", " ")
    assert f"no alarm on the prefixes of {quiet} of {healthy}" in README.replace("\n", " ")
    holdouts = []
    for name in SETS[2:]:
        real = rules(name)["real"]
        holdouts.append(f"{real['correct']}/{real['cases']}")
    assert f"**{' · '.join(holdouts)}**" in README
    real = rules("real_runs")["real"]
    in_window = f"{real['rollbacks_in_window']}/{real['rollbacks']} rollbacks"
    assert f"**{real['correct']}/{real['cases']}**, {in_window}" in README
