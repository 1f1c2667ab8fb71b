"""The adaptive limit's queue: calls go in the order they asked, a freed slot wakes one waiting
call (not all of them), and a cancelled call never holds or loses a slot."""

from __future__ import annotations

import asyncio

from rubric_studio.judges.concurrency import AdaptiveLimit


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_calls_get_their_slots_in_the_order_they_asked():
    limit = AdaptiveLimit(2)
    order: list[int] = []
    release = asyncio.Event()

    async def call(n: int) -> None:
        ticket = await limit.acquire()
        order.append(n)
        await release.wait()
        limit.release(ticket)

    tasks = [asyncio.ensure_future(call(n)) for n in range(12)]
    await _settle()
    assert order == [0, 1] and limit.in_use == 2
    release.set()
    await asyncio.gather(*tasks)
    assert order == list(range(12))
    assert limit.in_use == 0


async def test_a_freed_slot_wakes_one_waiting_call_not_every_one():
    """20,000 calls through 4 slots: each waiting call waits once. (Waking every waiter on every
    release made each of them queue again: about n²/2 waits, the event loop busy for seconds.)"""
    limit = AdaptiveLimit(4)
    loop = asyncio.get_running_loop()
    waits = 0
    create_future = loop.create_future

    def counted():
        nonlocal waits
        waits += 1
        return create_future()

    loop.create_future = counted  # type: ignore[method-assign]
    try:
        async def call() -> None:
            ticket = await limit.acquire()
            await asyncio.sleep(0)
            limit.release(ticket)

        calls = 20_000
        await asyncio.gather(*(call() for _ in range(calls)))
    finally:
        loop.create_future = create_future  # type: ignore[method-assign]
    assert waits <= calls
    assert limit.in_use == 0


async def test_a_cancelled_waiting_call_takes_no_slot_and_a_cancelled_woken_one_passes_it_on():
    limit = AdaptiveLimit(1)
    first = await limit.acquire()
    got: list[str] = []

    async def call(name: str) -> None:
        ticket = await limit.acquire()
        got.append(name)
        limit.release(ticket)

    waiting = asyncio.ensure_future(call("cancelled while waiting"))
    woken = asyncio.ensure_future(call("cancelled once woken"))
    last = asyncio.ensure_future(call("last"))
    await _settle()
    waiting.cancel()
    await _settle()
    limit.release(first)  # wakes "cancelled once woken" (the cancelled one is skipped)...
    woken.cancel()  # ...which is cancelled before it runs: its slot goes to "last"
    await asyncio.gather(waiting, woken, last, return_exceptions=True)
    assert got == ["last"]
    assert limit.in_use == 0
    ticket = await asyncio.wait_for(limit.acquire(), 5)  # nothing is left holding a slot
    limit.release(ticket)


async def test_a_limit_that_fell_while_a_call_was_being_woken_makes_it_wait_again():
    limit = AdaptiveLimit(2)
    a, b = await limit.acquire(), await limit.acquire()
    got: list[str] = []

    async def call(name: str) -> None:
        await limit.acquire()  # held: the test ends with it in flight
        got.append(name)

    waiting = asyncio.ensure_future(call("c"))
    await _settle()
    limit.release(a)  # c is woken...
    assert limit.overloaded(b)  # ...and the limit halves to 1 before c runs: b still holds it
    await _settle()
    assert got == [] and limit.in_use == 1
    limit.release(b)
    await asyncio.wait_for(waiting, 5)
    assert got == ["c"] and limit.in_use == 1


async def test_a_limit_that_grows_lets_a_waiting_call_go_at_once():
    limit = AdaptiveLimit(4)
    tickets = [await limit.acquire() for _ in range(4)]
    assert limit.overloaded(tickets[0])  # 4 -> 2
    for ticket in tickets[:3]:
        limit.release(ticket)
    held = [await limit.acquire()]  # one in flight beside tickets[3]: the limit of 2 is reached
    waiting = asyncio.ensure_future(limit.acquire())
    await _settle()
    assert not waiting.done()
    limit.answered()
    limit.answered()  # two answers in a row at 2: the limit grows to 3, the waiting call goes
    await asyncio.wait_for(waiting, 5)
    held.append(waiting.result())
    assert limit.in_use == 3


async def test_a_lowered_ceiling_also_bounds_the_limit_in_use():
    """A call that timed out while 3 were in flight lowers the ceiling to 2: the limit in use, halved
    from 6 to 3, must come down to it too (3 at once would queue on the server again)."""
    limit = AdaptiveLimit(6)
    tickets = [await limit.acquire() for _ in range(3)]
    assert limit.overloaded(tickets[0], "timeout")
    assert limit.ceiling == 2 and limit.current == 2
    for ticket in tickets:
        limit.release(ticket)
