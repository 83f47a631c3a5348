REQUIRES = {"packages": ["tests.verify_fake.fakeattn"]}
STEP_REQUIRES = {"reproduce": {"packages": ["no_such_module_errkb_test"]}, "control": {"arch": "sm100+"}}


def reproduce(ctx):
    raise AssertionError("never runs")


def control(ctx):
    raise AssertionError("never runs")
