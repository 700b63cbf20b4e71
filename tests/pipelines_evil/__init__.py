"""NOT an allowed package (its name only starts like ``tests.pipelines``): importing it
must never happen; ``boom`` leaves a file behind if it does."""
