"""An experiment kept in storage the driver does not own (a URI), above
`shell.storage`: the driver's staging mirror (`mirror`), the shipper that
copies it to the storage (`shipper`), the stored layout and reading it
back (`stored_state`), the lease (`lease`) and reads from any machine
(`remote`).
"""
