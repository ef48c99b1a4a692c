-- The seeded data: 10 000 accounts and 200 000 orders (about 20 per account), from a fixed seed, so every start
-- of the database holds the same rows and runs compare. The webapp reads the sizes from the tables.
SELECT setseed(0.42);
INSERT INTO accounts (id, name, balance)
    SELECT i, 'account-' || i, (random() * 100000)::bigint FROM generate_series(1, 10000) AS i;
INSERT INTO orders (id, account_id, amount, note)
    SELECT i, 1 + (random() * 9999)::integer, (random() * 1000)::integer, md5(random()::text)
    FROM generate_series(1, 200000) AS i;
ANALYZE;
