"""Replay rules of RECOVER CFSTRUCT (app.core.cfrecovery): a backup plus log records, in any order."""

from __future__ import annotations

import itertools

from app.core.cfrecovery import SavedMessage, replay


def msg(queue: str, ident: int, priority: int = 5) -> SavedMessage:
    score = f"{(9 - priority) * 2**49 + ident:016d}"
    return SavedMessage(queue, ident, f"{score}|1|0|0|1|0|||0|0|", b"{}", f"{queue}-{ident}".encode())


def test_backup_plus_puts_minus_gets_in_delivery_order():
    backup = [msg("A", 1), msg("A", 2)]
    puts = [msg("A", 4), msg("A", 3, priority=9), msg("B", 1)]
    records = [{"o": "G", "q": "A", "i": 2}, {"o": "G", "q": "B", "i": 7}]
    out = replay(backup, records, puts)
    assert [m.id for m in out.messages["A"]] == [3, 1, 4]  # priority 9 first, then FIFO
    assert [m.id for m in out.messages["B"]] == [1]
    assert out.last_ids == {"A": 4, "B": 7} and out.count == 4


def test_clear_and_delete_cut_every_earlier_id_whatever_the_record_order():
    puts = [msg("Q", 1), msg("Q", 2), msg("Q", 5)]
    records = [{"o": "C", "q": "Q", "upto": 2}, {"o": "D", "q": "Q", "upto": 1}]
    for order in itertools.permutations(records):
        out = replay([], list(order), puts)
        assert [m.id for m in out.messages["Q"]] == [5]
        assert out.last_ids["Q"] == 5


def test_a_record_replayed_twice_changes_nothing():
    once = replay([msg("Q", 1)], [{"o": "G", "q": "Q", "i": 1}], [msg("Q", 2)])
    twice = replay([msg("Q", 1), msg("Q", 1)], [{"o": "G", "q": "Q", "i": 1}] * 2, [msg("Q", 2)] * 2)
    assert [m.id for m in once.messages["Q"]] == [m.id for m in twice.messages["Q"]] == [2]
