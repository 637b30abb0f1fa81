"""The turns' rule and hub (harness/sweep/mpsbench_sweep/turns.py): TurnOrder driven directly, TurnHub through
real Unix sockets with plain socket clients. The sweep and the real mpsbench taking turns: test_turns.py.
"""
import os
import socket
import threading
import time
import unittest

import sweeptest  # noqa: F401 (puts the sweep's package on sys.path)

from mpsbench_sweep.turns import TurnHub, TurnOrder  # noqa: E402

WAIT_S = 10  # a bounded wait for what should happen at once (a loaded CI machine)


def rotated(names, index):
    """The group's order rotated by sum(index) % n: who goes first among equal asks."""
    first = sum(index) % len(names)
    return names[first:] + names[:first]


def drive(names, asks):
    """Every job asks for each of asks in turn, gives each turn back at once and ends after the last; the
    rule's log."""
    order = TurnOrder(names)
    pending = {n: list(asks) for n in names}
    for n in names:
        order.want(n, pending[n].pop(0))
    while True:
        n = order.next()
        if n is None:
            break
        order.done(n)
        if pending[n]:
            order.want(n, pending[n].pop(0))
        else:
            order.end(n)
    return order.log


class Rule(unittest.TestCase):
    def test_the_turn_waits_until_every_live_job_has_asked(self):
        order = TurnOrder(["a", "b", "c"])
        self.assertIsNone(order.next())
        order.want("a", (0, 0))
        order.want("b", (0, 0))
        self.assertIsNone(order.next(), "c has not asked")
        order.want("c", (0, 0))
        self.assertEqual(order.next(), "a")
        self.assertIsNone(order.next(), "a holds the turn")
        order.done("a")
        self.assertIsNone(order.next(), "a has not asked again")
        order.want("a", (0, 1))
        self.assertEqual(order.next(), "b")

    def test_the_lowest_configuration_and_step_goes_first(self):
        order = TurnOrder(["a", "b", "c"])
        order.want("a", (1, 0))
        order.want("b", (0, 1))
        order.want("c", (0, 0))
        self.assertEqual(order.next(), "c")
        order.done("c")
        order.want("c", (2, 0))
        self.assertEqual(order.next(), "b")
        order.done("b")
        order.want("b", (1, 1))
        self.assertEqual(order.next(), "a")
        self.assertEqual([index for _, index in order.log], [(0, 0), (0, 1), (1, 0)])

    def test_equal_asks_go_in_the_group_order_rotated_by_the_step(self):
        asks = [(-1, 0), (0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]
        for names in (["a", "b", "c"], [0, 1]):
            log = drive(names, asks)
            self.assertEqual(log, [(n, index) for index in asks for n in rotated(names, index)], names)
        # Two jobs: the order the real mpsbench saw through the hub (-1 % 2 = 1: the second job opens first).
        self.assertEqual(drive([0, 1], asks)[:6], [(1, (-1, 0)), (0, (-1, 0)), (0, (0, 0)), (1, (0, 0)),
                                                   (1, (0, 1)), (0, (0, 1))])
        # The first of equal asks moves on by one per step: over n steps each job is first once.
        self.assertEqual(sorted(n for n, index in drive(["a", "b", "c"], [(0, 0), (0, 1), (1, 1)])[::3]),
                         ["a", "b", "c"])

    def test_the_end_of_a_job_that_never_asked_lets_the_others_go(self):
        order = TurnOrder(["a", "b"])
        order.want("a", (0, 0))
        self.assertIsNone(order.next())
        order.end("b")
        self.assertEqual(order.next(), "a")
        order.done("a")
        order.want("a", (0, 1))
        self.assertEqual(order.next(), "a", "b is out of the turns for good")

    def test_the_end_of_the_holder_frees_the_turn(self):
        order = TurnOrder(["a", "b"])
        order.want("a", (0, 0))
        order.want("b", (0, 0))
        self.assertEqual(order.next(), "a")
        order.end("a")
        self.assertEqual(order.next(), "b")
        self.assertRaises(ValueError, order.done, "a")
        self.assertRaises(ValueError, order.want, "a", (0, 1))

    def test_protocol_errors_raise(self):
        order = TurnOrder(["a", "b"])
        self.assertRaises(ValueError, order.done, "a")  # holds nothing
        order.want("a", (0, 0))
        self.assertRaises(ValueError, order.want, "a", (0, 1))  # waits already
        order.want("b", (0, 0))
        self.assertEqual(order.next(), "a")
        self.assertRaises(ValueError, order.want, "a", (0, 1))  # holds the turn
        self.assertRaises(ValueError, order.done, "b")  # b waits, a holds
        order.done("a")
        self.assertRaises(ValueError, order.done, "a")  # given back already

    def test_the_log_records_each_turn_in_order(self):
        order = TurnOrder(["a", "b"])
        order.want("b", (-1, 0))
        order.want("a", (-1, 0))
        self.assertEqual(order.next(), "b")
        order.done("b")
        order.want("b", (0, 0))
        self.assertEqual(order.next(), "a")
        self.assertEqual(order.log, [("b", (-1, 0)), ("a", (-1, 0))])
        self.assertEqual(order.granted, {"a": 1, "b": 1})


class Client:
    """Rank 0 of a job, as a plain socket: want, go, done."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT_S)  # a bounded wait: a missing "go" fails the test, never hangs it
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")

    def send(self, line):
        self.sock.sendall(line.encode())

    def want(self, config, step):
        self.send(f"want {config} {step}\n")

    def answer(self):
        """The hub's next line: b"go\\n", or b"" once it closed the connection."""
        return self.reader.readline()

    def take(self, config, step):
        self.want(config, step)
        got = self.answer()
        if got != b"go\n":
            raise AssertionError(f"want {config} {step}: the hub answered {got!r}")

    def done(self):
        self.send("done\n")

    def close(self):
        self.reader.close()
        self.sock.close()


class Hub(unittest.TestCase):
    def hub(self, names):
        hub = TurnHub(names)
        closed = []
        original = hub.close

        def close():
            closed.append(True)
            return original()
        hub.close = close
        self.addCleanup(lambda: closed or original())
        return hub

    def clients(self, hub, names):
        out = {n: Client(hub.path(n)) for n in names}
        for c in out.values():
            self.addCleanup(c.close)
        return out

    def test_turns_go_in_the_rules_order(self):
        names = [0, 1, 2]
        asks = [(-1, 0), (0, 0), (0, 1), (1, 0)]
        hub = self.hub(names)
        seen, lock, errors = [], threading.Lock(), []

        def job(name):
            client = Client(hub.path(name))
            try:
                for config, step in asks:
                    client.take(config, step)
                    with lock:
                        seen.append((name, (config, step)))
                    client.done()
            except (AssertionError, OSError) as e:
                errors.append(f"{name}: {e}")
            finally:
                client.close()

        threads = [threading.Thread(target=job, args=(n,), daemon=True) for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT_S)
            self.assertFalse(t.is_alive(), "a client waits for a turn that never came")
        self.assertEqual(errors, [])
        want = [(n, index) for index in asks for n in rotated(names, index)]
        self.assertEqual(seen, want)
        records = hub.close()
        self.assertEqual(hub.order.log, want)
        self.assertEqual(hub.problems, {})
        for n in names:
            self.assertEqual((records[n]["group"], records[n]["turns"]), (names, len(asks)))
            self.assertGreaterEqual(records[n]["waited_s"], 0)

    def test_a_client_that_closes_while_holding_gives_the_turn_to_the_next(self):
        hub = self.hub([0, 1])
        c = self.clients(hub, [0, 1])
        c[0].want(0, 0)
        c[1].want(0, 0)
        self.assertEqual(c[0].answer(), b"go\n")
        c[0].close()  # as a crashed job's rank 0: no "done"
        self.assertEqual(c[1].answer(), b"go\n")
        c[1].done()
        c[1].take(1, 0)  # job 0 is out: job 1 goes on alone
        hub.close()
        self.assertEqual(hub.order.log, [(0, (0, 0)), (1, (0, 0)), (1, (1, 0))])
        self.assertEqual(hub.problems, {}, "a closed connection is a job's end, not a problem")

    def test_the_end_of_a_job_that_never_connected_lets_the_others_go(self):
        hub = self.hub([0, 1, 2])
        c = self.clients(hub, [0, 2])
        c[0].want(-1, 0)
        c[2].want(-1, 0)
        hub.end(1)  # its process ended before its rank 0 connected
        self.assertEqual(c[2].answer(), b"go\n")  # -1 % 3 = 2: job 2 first
        c[2].done()
        c[2].want(0, 0)  # the next turn waits for every job that lives, 1 no longer among them
        self.assertEqual(c[0].answer(), b"go\n")
        # A connection to the ended job's socket is closed at once.
        late = Client(hub.path(1))
        self.addCleanup(late.close)
        self.assertEqual(late.answer(), b"")
        hub.close()
        self.assertEqual(hub.order.log, [(2, (-1, 0)), (0, (-1, 0))])
        self.assertEqual(hub.order.granted[1], 0)

    def test_a_malformed_line_drops_only_that_job(self):
        hub = self.hub([0, 1, 2])
        c = self.clients(hub, [0, 1, 2])
        c[1].send("want x\n")
        self.assertEqual(c[1].answer(), b"", "the hub closes the connection of a job that breaks the protocol")
        self.assertEqual(list(hub.problems), [1])
        c[0].want(0, 0)
        c[2].want(0, 0)
        self.assertEqual(c[0].answer(), b"go\n")
        c[0].done()
        c[0].want(1, 0)
        self.assertEqual(c[2].answer(), b"go\n")
        c[2].done()
        records = hub.close()
        self.assertEqual(hub.order.log, [(0, (0, 0)), (2, (0, 0))])
        self.assertEqual([records[n]["turns"] for n in (0, 1, 2)], [1, 0, 1])

    def test_close_removes_the_private_directory(self):
        hub = self.hub([0, 1])
        directory = hub.dir
        self.assertTrue(all(os.path.dirname(hub.path(n)) == directory for n in (0, 1)))
        self.assertEqual(os.stat(directory).st_mode & 0o777, 0o700)
        c = self.clients(hub, [0])
        c[0].want(0, 0)  # waits for job 1, which never asks
        # Read by the hub before it closes (a connection closed with the line unread would be reset instead).
        deadline = time.monotonic() + WAIT_S
        while 0 not in hub.order.asked and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertIn(0, hub.order.asked)
        hub.close()
        self.assertFalse(os.path.exists(directory))
        self.assertEqual(c[0].answer(), b"", "a job still waiting sees the end of the connection")


if __name__ == "__main__":
    unittest.main()
