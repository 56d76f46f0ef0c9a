"""The imperative shell: clocks, files, threads, Ray and the event log.

It asks executors for the next event, logs it, hands it to the core's step
function and carries out the commands that come back. It decides nothing a
pure function could decide.
"""
