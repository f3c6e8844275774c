-- Vendor disambiguation answers initialisms ("BCIT", "ASF"): the initial
-- letters of a multi-word normalised name, skipping of/the/and/for/de/&.
-- Generated, so the rule lives in one place and every writer gets it free.
ALTER TABLE vendors ADD COLUMN initials text GENERATED ALWAYS AS (
    CASE WHEN normalized_name ~ '\s' THEN nullif(regexp_replace(
        regexp_replace(normalized_name, '\m(of|the|and|for|de|&)\M', '', 'g'),
        '\s*(\w)\w*[^\s]*\s*', '\1', 'g'), '') END
) STORED;
CREATE INDEX vendors_initials ON vendors (initials) WHERE initials IS NOT NULL;
