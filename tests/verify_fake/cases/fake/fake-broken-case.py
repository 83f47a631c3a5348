def reproduce(ctx):
    {}["a bug in the case itself"]  # KeyError outside any claimed call: an error, not a verdict
