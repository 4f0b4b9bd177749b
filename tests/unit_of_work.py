"""The fake unit of work of service tests: its commit answers what a test scripts, with the outcomes the store's door
gives (store/outcomes.py: a refusal writes nothing), and otherwise commits for real on the test's engine (moto in
memory, tests/moto_in_process.py). One idiom for "the next two saves lose a race", "every save is contended",
"record what each unit writes" and "the process dies right after its write"."""

from collections.abc import Callable
from dataclasses import dataclass, field

from chalicelib.store.unit_of_work import UnitOfWork

REAL = object()  # an answer: commit for real


@dataclass
class Commits:
    real: Callable  # the real commit, for answers that call it
    units: list[UnitOfWork] = field(default_factory=list)  # every unit that came to commit, in order
    answers: list = field(default_factory=list)  # what each was answered (None: written)


def fake_commits(monkeypatch, *answers, always=REAL) -> Commits:
    """Until the monkeypatch is undone, each unit's commit answers the next of `answers`, then `always` for every later
    one. An answer is REAL (commit for real), an outcome of store/outcomes.py (nothing is written), or a function of
    the unit and the real commit, whose return is the commit's answer."""
    commits, scripted = Commits(UnitOfWork.commit), list(answers)

    def commit(uow):
        answer = scripted.pop(0) if scripted else always
        commits.units.append(uow)
        if answer is REAL:
            answer = commits.real(uow)
        elif callable(answer):
            answer = answer(uow, commits.real)
        else:
            uow.committed = True  # as a refused commit leaves it: a unit of work commits once
        commits.answers.append(answer)
        return answer

    monkeypatch.setattr(UnitOfWork, "commit", commit)
    return commits
