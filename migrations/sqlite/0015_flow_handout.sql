-- How a sign-in's connect link reached the person (shown by a waiting client, passed on in
-- words, the connect card, the connections page): what the "connected" page tells them to do
-- next. Empty in rows written before, and by a replica that does not know it yet.
ALTER TABLE flows ADD COLUMN handout TEXT NOT NULL DEFAULT '';
