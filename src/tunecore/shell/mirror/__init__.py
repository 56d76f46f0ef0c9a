"""An experiment kept in storage the driver does not own (a URI), above
`shell.storage`: the driver's staging mirror (`mirror`), the shipper that
copies it to the storage (`shipper`), the stored layout and reading it
back (`stored_state`), the lease and its renewer (`lease`), the fetch of
requests posted to the storage (`request_fetcher`), the pure shipping
rules (`shipping_rules`) and reads from any machine (`remote`).
"""
