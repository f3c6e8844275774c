-- The identifiers of each product with release cycles, as keys a bill of materials
-- is matched by (sql.identifiers): its package URLs (type/namespace/name) and CPEs
-- (vendor:product) from the note's identifiers:, and the names it answers to. A
-- rebuild replaces a changed note's identifiers with its cycles; deleting the note
-- deletes them. One indexed lookup matches every component of a bill.
CREATE TABLE product_identifiers (
    document_id bigint NOT NULL
                REFERENCES lifecycle_products (document_id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('purl', 'cpe', 'name')),
    key         text NOT NULL,
    -- as the note writes it (the product's title or slug for a name)
    identifier  text NOT NULL,
    PRIMARY KEY (document_id, kind, key)
);
CREATE INDEX product_identifiers_key ON product_identifiers (kind, key);
