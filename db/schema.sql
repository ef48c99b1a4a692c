-- The shared database's tables, owned by the nodes' role capbench. The query endpoint (webapp: /query) reads
-- orders by id range, optionally joined to their account, and its writes add to an account's balance.
CREATE TABLE accounts (
    id      integer PRIMARY KEY,
    name    text    NOT NULL,
    balance bigint  NOT NULL
);
CREATE TABLE orders (
    id         integer PRIMARY KEY,
    account_id integer NOT NULL REFERENCES accounts (id),
    amount     integer NOT NULL,
    note       text    NOT NULL
);
CREATE INDEX orders_by_account ON orders (account_id);
