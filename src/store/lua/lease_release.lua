-- Compare-and-delete: KEYS[1] = lease, ARGV[1] = holder token. Only the holder may
-- release, so an instance whose lease expired never deletes its successor's lease.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
