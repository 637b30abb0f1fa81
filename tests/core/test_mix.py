"""The verdict on a mix (core/mpsbench_core/mix.py): per tenant, per mode, against the tenant alone in that mode."""
import unittest

from corecase import mix, tenant, with_raw
from mpsbench_core.mix import PROTECTED, mix_verdict, mode_phrase, times
from mpsbench_core.verdict import MixVerdict, verdict_lines, verdicts


def recorded_mix():
    """The H100 mix of results/h100-2026-11-25 (matmul/fp32/4096:4,inference/fp16/8:4), its tenants' figures:
    throughput in the mix and alone (same mode), inference's p99 in the mix and alone."""
    def two(mm, mm_alone, inf, inf_alone, p99, p99_alone):
        return [tenant("matmul", 4, mm, mm_alone, size=4096),
                tenant("inference", 4, inf, inf_alone, p99, p99_alone, precision="fp16", size=8)]
    return [mix("timeslice", two(42.6e12, 46.0e12, 482.5, 5891.6, 19.33e-3, 0.6882e-3)),
            mix("mps", two(52.56e12, 52.76e12, 255.9, 50603.2, 32.07e-3, 0.1168e-3)),
            mix("mps-qos", two(17.77e12, 18.89e12, 37427.0, 41945.5, 0.1281e-3, 0.1131e-3), percentage=12)]


class MixVerdicts(unittest.TestCase):
    maxDiff = None

    def test_the_recorded_mix_names_the_starved_tenant_and_the_mode_that_protects_it(self):
        [v] = verdicts(recorded_mix())
        self.assertIsInstance(v, MixVerdict)
        # hand-computed: timeslice 5891.6 / 482.5 = 12.21, p99 19.33 / 0.6882 = 28.09; mps 50603.2 / 255.9 = 197.7,
        # p99 32.07 / 0.1168 = 274.6; mps-qos matmul 18.89 / 17.77 = 1.063, inference 41945.5 / 37427 = 1.121,
        # p99 0.1281 / 0.1131 = 1.133 -> within 1.2x; matmul there: 17.77 / 52.56 = 0.338 of its plain-MPS best
        self.assertEqual(v.line, "verdict: mix matmul/fp32/4096:4,inference/fp16/8:4: time slicing slows inference "
                                 "12.2x (p99 28.1x alone); plain MPS slows inference 198x (p99 275x alone); "
                                 "mps-qos 12% keeps every tenant within 1.2x (matmul 1.06x; inference 1.12x, p99 "
                                 "1.13x): it protects inference, at 0.34x matmul's throughput under plain MPS")
        tenant_, mode = v.starved
        self.assertEqual((tenant_.name, mode.label, round(tenant_.slowdown, 1)), ("inference", "mps", 197.7))
        self.assertEqual(v.protector.label, "mps-qos:12%")

    def test_mixes_come_after_kernels_and_applications(self):
        from corecase import app, kernel
        lines = verdict_lines(verdicts(recorded_mix()[:1] + [kernel("mps", 64, 1, 2.0), kernel("timeslice", 64, 1, 1.0),
                                                            app("mps", 1, 1.0)]))
        self.assertEqual([l.split(":")[1].split()[0] for l in lines], ["matmul", "md", "mix"])

    def test_rounds_that_disagree_about_the_limit_cannot_tell(self):
        def rounds(mps_nbody_alone):
            out = []
            for r, alone in enumerate(mps_nbody_alone):
                for mode, nbody in (("timeslice", 5.0), ("mps", 10.0)):
                    record = mix(mode, [tenant("matmul", 2, 10.0, 10.0), tenant("nbody", 2, nbody,
                                                                                alone if mode == "mps" else 20.0)])
                    out.append(with_raw(record, round=r))
            return out
        # plain MPS slows nbody 1.30x in one round and 1.70x in the other: its interval holds 1.5x
        [v] = verdicts(rounds([13.0, 17.0]))
        self.assertIn("plain MPS: cannot tell whether it keeps nbody within 1.5x (", v.sentence)
        self.assertIn("time slicing slows nbody 4.00x", v.sentence)
        # 1.10x and 1.12x: known to be within 1.5x, and it protects every tenant
        [v] = verdicts(rounds([11.0, 11.2]))
        self.assertIn("plain MPS keeps every tenant within", v.sentence)
        self.assertTrue(v.sentence.endswith("it protects every tenant"), v.sentence)

    def test_no_mode_protects(self):
        [v] = verdicts(recorded_mix()[:2])
        self.assertTrue(v.sentence.endswith("no mode measured keeps inference within 1.5x (the least harm: time "
                                            "slicing, 28.1x)"), v.sentence)

    def test_without_a_latency_tenant_every_tenant_is_the_focus(self):
        a = [tenant("matmul", 2, 10.0, 20.0), tenant("nbody", 2, 9.0, 10.0)]  # 2.00x and 1.11x
        b = [tenant("matmul", 2, 19.0, 20.0), tenant("nbody", 2, 10.0, 10.0)]  # 1.05x and 1.00x
        [v] = verdicts([mix("timeslice", a), mix("mps", b)])
        self.assertEqual(v.sentence, "time slicing slows matmul 2.00x; plain MPS keeps every tenant within 1.1x "
                                     "(matmul 1.05x; nbody 1.00x): it protects every tenant")

    def test_failed_and_unverified_modes_are_left_out_and_counted(self):
        good = [tenant("matmul", 2, 10.0, 10.0), tenant("nbody", 2, 10.0, 10.0)]
        [v] = verdicts([mix("timeslice", good), mix("mps", good, status="failed"), mix("green", good, verified=False)])
        self.assertEqual(v.sentence, "time slicing keeps every tenant within 1.0x (matmul 1.00x; nbody 1.00x); 2 "
                                     "mode(s) failed or unverified, left out")
        [none] = verdicts([mix("mps", good, status="failed")])
        self.assertEqual(none.sentence, "no mix verdict: no mode measured the tenants; 1 mode(s) failed or "
                                        "unverified, left out")

    def test_tenants_of_one_kernel_get_longer_names(self):
        t = [tenant("matmul", 2, 10.0, 30.0, size=256), tenant("matmul", 2, 10.0, 10.0, size=4096)]
        [v] = verdicts([mix("mps", t)])
        self.assertEqual(v.sentence, "plain MPS slows matmul/fp32/256 3.00x")

    def test_a_missing_alone_gives_no_figure(self):
        [v] = verdicts([mix("mps", [tenant("matmul", 2, 10.0, None), tenant("nbody", 2, 10.0, None)])])
        self.assertEqual(v.sentence, "plain MPS: no tenant figure (the tenants alone were not measured)")

    def test_words(self):
        self.assertEqual([mode_phrase(m) for m in ("timeslice", "mps", "mps-qos:12%", "mps-mem:2G", "green")],
                         ["time slicing", "plain MPS", "mps-qos 12%", "mps-mem 2G", "green contexts"])
        self.assertEqual([times(v) for v in (197.76, 12.21, 1.121, 99.96, 9.996)],
                         ["198x", "12.2x", "1.12x", "100x", "10.0x"])
        self.assertEqual(PROTECTED, 1.5)
        self.assertEqual(mix_verdict(recorded_mix()).limit, PROTECTED)


if __name__ == "__main__":
    unittest.main()
