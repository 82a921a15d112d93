-- Schema of the sample database: the tables of PostgreSQL's "dvdrental" sample
-- that the API reads, plus the review table it writes.
-- Idempotent: loading it twice changes nothing (see db/load.py).

DO $$ BEGIN
    CREATE TYPE mpaa_rating AS ENUM ('G', 'PG', 'PG-13', 'R', 'NC-17');
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

DO $$ BEGIN
    CREATE DOMAIN year AS integer CONSTRAINT year_check CHECK (VALUE >= 1901 AND VALUE <= 2155);
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

CREATE TABLE IF NOT EXISTS language (
    language_id  serial PRIMARY KEY,
    name         character(20) NOT NULL,
    last_update  timestamp without time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS category (
    category_id  serial PRIMARY KEY,
    name         character varying(25) NOT NULL,
    last_update  timestamp without time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS actor (
    actor_id     serial PRIMARY KEY,
    first_name   character varying(45) NOT NULL,
    last_name    character varying(45) NOT NULL,
    last_update  timestamp without time zone NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS film (
    film_id           serial PRIMARY KEY,
    title             character varying(255) NOT NULL,
    description       text,
    release_year      year,
    language_id       smallint NOT NULL REFERENCES language (language_id),
    rental_duration   smallint NOT NULL DEFAULT 3,
    rental_rate       numeric(4,2) NOT NULL DEFAULT 4.99,
    length            smallint,
    replacement_cost  numeric(5,2) NOT NULL DEFAULT 19.99,
    rating            mpaa_rating DEFAULT 'G',
    last_update       timestamp without time zone NOT NULL DEFAULT now(),
    special_features  text[]
);

CREATE TABLE IF NOT EXISTS film_actor (
    actor_id     smallint NOT NULL REFERENCES actor (actor_id),
    film_id      smallint NOT NULL REFERENCES film (film_id),
    last_update  timestamp without time zone NOT NULL DEFAULT now(),
    PRIMARY KEY (actor_id, film_id)
);

CREATE TABLE IF NOT EXISTS film_category (
    film_id      smallint NOT NULL REFERENCES film (film_id),
    category_id  smallint NOT NULL REFERENCES category (category_id),
    last_update  timestamp without time zone NOT NULL DEFAULT now(),
    PRIMARY KEY (film_id, category_id)
);

CREATE TABLE IF NOT EXISTS review (
    review_id   serial PRIMARY KEY,
    film_id     integer NOT NULL REFERENCES film (film_id),
    rating      integer NOT NULL CHECK (rating BETWEEN 1 AND 5),
    created_at  timestamp with time zone NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS idx_review_film_id ON review (film_id);

-- The client's Idempotency-Key of a POST /reviews/ that sent one (a retry finds
-- the review it stored). Added by ALTER so that loading this file upgrades a
-- database loaded before it had the column. Unique where set: a partial index,
-- so a review without a key costs no index entry.
ALTER TABLE review ADD COLUMN IF NOT EXISTS idempotency_key character varying(255);
CREATE UNIQUE INDEX IF NOT EXISTS idx_review_idempotency_key
    ON review (idempotency_key) WHERE idempotency_key IS NOT NULL;
