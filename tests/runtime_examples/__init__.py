"""Real programs the runtime tests run twice, plainly and under ``gradwarden debug``, comparing
the exit status, the standard output (losses, gradients, results printed by the program) and
the findings. ``compare`` holds the helpers; the scripts are ordinary PyTorch programs."""
