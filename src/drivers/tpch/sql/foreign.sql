-- One statement a line, after the keys: the foreign keys, which PostgreSQL's planner reads for join estimates.
ALTER TABLE nation ADD FOREIGN KEY (n_regionkey) REFERENCES region;
ALTER TABLE supplier ADD FOREIGN KEY (s_nationkey) REFERENCES nation;
ALTER TABLE customer ADD FOREIGN KEY (c_nationkey) REFERENCES nation;
ALTER TABLE partsupp ADD FOREIGN KEY (ps_partkey) REFERENCES part, ADD FOREIGN KEY (ps_suppkey) REFERENCES supplier;
ALTER TABLE orders ADD FOREIGN KEY (o_custkey) REFERENCES customer;
ALTER TABLE lineitem ADD FOREIGN KEY (l_orderkey) REFERENCES orders, ADD FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp;
