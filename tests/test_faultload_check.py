"""The fault load's checker (tests/support/faultload.py ``judge``) on synthetic ledgers: it must catch
duplicates, losses, unexpected deliveries and order violations, and excuse only calls in doubt."""

from __future__ import annotations

import httpx

from tests.support.faultload import Delivery, Ledger, commit_in_doubt, judge, order_violations
from tests.support.mq import MQFailed


def failed(status: int, reason: int) -> MQFailed:
    return MQFailed(status, {"error": {"completion_code": 2, "reason": reason}})


def clean_ledger() -> Ledger:
    """Producer 0 put 0-0..0-3, producer 1 put 1-0..1-1; two consumers got all, in order."""
    return Ledger(committed_puts={"0-0", "0-1", "0-2", "0-3", "1-0", "1-1"},
                  deliveries=[Delivery("0-0", "A"), Delivery("1-0", "B"), Delivery("0-1", "B"),
                              Delivery("0-2", "A"), Delivery("1-1", "A"), Delivery("0-3", "B")])


def test_a_clean_run_passes() -> None:
    outcome = judge(clean_ledger(), depth={"Q": 0}, uncommitted={"Q": 0})
    assert outcome.ok, outcome.summary()
    assert outcome.delivered == 6 and outcome.committed_puts == 6


def test_a_duplicate_is_caught() -> None:
    ledger = clean_ledger()
    ledger.deliveries.append(Delivery("1-1", "DRAIN:Q"))
    outcome = judge(ledger)
    assert outcome.duplicates == ["1-1"] and not outcome.ok


def test_a_loss_is_caught_unless_its_get_was_in_doubt() -> None:
    ledger = clean_ledger()
    ledger.deliveries = [d for d in ledger.deliveries if d.key != "0-2"]
    assert judge(ledger).missing == ["0-2"]
    ledger.backed_out_gets.add("0-2")  # a get backed out (2003) does not account for the message
    assert judge(ledger).missing == ["0-2"]
    ledger.in_doubt_gets.add("0-2")  # its MQCMIT failed in doubt: it may have been consumed
    outcome = judge(ledger)
    assert outcome.ok and outcome.in_doubt_gets == 1


def test_a_backed_out_put_that_shows_up_is_unexpected() -> None:
    ledger = clean_ledger()
    ledger.backed_out_puts.add("0-4")  # MQCMIT answered 2003: definitely not committed
    ledger.deliveries.append(Delivery("0-4", "A"))
    outcome = judge(ledger)
    assert outcome.unexpected == ["0-4"] and not outcome.ok
    assert outcome.backed_out_puts == 1


def test_an_in_doubt_put_may_or_may_not_show_up() -> None:
    ledger = clean_ledger()
    ledger.in_doubt_puts |= {"0-4", "0-5"}
    ledger.deliveries.append(Delivery("0-5", "A"))
    outcome = judge(ledger)
    assert outcome.ok, outcome.summary()
    assert outcome.in_doubt_puts == 2


def test_a_message_nobody_put_is_unexpected() -> None:
    ledger = clean_ledger()
    ledger.deliveries.append(Delivery("7-0", "A"))
    assert judge(ledger).unexpected == ["7-0"]


def test_order_within_one_consumer_connection_is_checked() -> None:
    ledger = clean_ledger()
    # consumer A got 0-3 before 0-2 (both with BackoutCount 0)
    ledger.deliveries = [Delivery("0-0", "A"), Delivery("0-1", "B"), Delivery("0-3", "A"),
                         Delivery("0-2", "A"), Delivery("1-0", "A"), Delivery("1-1", "B")]
    outcome = judge(ledger)
    assert outcome.order_violations == ["A: 0-2 after 0-3"] and not outcome.ok


def test_interleaving_between_consumers_and_producers_is_not_a_violation() -> None:
    # B's 0-1 comes after A's 0-2 in global order: fine, the rule is per connection
    deliveries = [Delivery("0-0", "A"), Delivery("0-2", "A"), Delivery("1-1", "A"), Delivery("0-1", "B"),
                  Delivery("1-0", "B"), Delivery("0-3", "B")]
    assert order_violations(deliveries, {d.key for d in deliveries}) == []


def test_a_backed_out_message_may_come_late() -> None:
    # 0-1 went back to the queue by a backout (BackoutCount 1) and came after 0-2: allowed
    deliveries = [Delivery("0-0", "A"), Delivery("0-2", "A"), Delivery("0-1", "A", backout_count=1)]
    assert order_violations(deliveries, {"0-0", "0-1", "0-2"}) == []
    # sequence numbers compare as numbers, not strings: 0-10 after 0-9 is in order
    assert order_violations([Delivery("0-9", "A"), Delivery("0-10", "A")], {"0-9", "0-10"}) == []


def test_left_over_state_fails_the_check() -> None:
    assert not judge(clean_ledger(), depth={"Q": 1}).ok
    assert not judge(clean_ledger(), uncommitted={"Q": 2}).ok
    assert not judge(clean_ledger(), cf_uows=["QM2:u1"]).ok


def test_which_commit_failures_are_in_doubt() -> None:
    assert commit_in_doubt(httpx.ReadTimeout("timed out"))
    assert commit_in_doubt(httpx.ConnectError("refused"))
    assert not commit_in_doubt(failed(503, 2345))  # CF not available: nothing happened (strict)
    assert commit_in_doubt(failed(409, 2009))  # connection broken (whatever the status)
    assert commit_in_doubt(failed(500, 2195))  # an unexpected server error
    assert not commit_in_doubt(failed(409, 2003))  # backed out: definitely not committed
    assert not commit_in_doubt(failed(500, 2003))
    assert not commit_in_doubt(failed(404, 2018))  # unknown hconn: nothing was committed
