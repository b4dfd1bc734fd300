-- While a webhook fails, its oldest pending delivery is tried again at next_probe_at, ahead of its
-- scheduled retry, so that a receiver back after a short outage gets its backlog within seconds
-- rather than at the schedule's next step (5 min, then 30 min). NULL while it does not fail.
ALTER TABLE "webhooks" ADD COLUMN "next_probe_at" TIMESTAMPTZ(3);

-- CreateIndex: the deliveries in flight (leased), by webhook: a webhook with one in flight gets
-- no other, so that its receiver sees its events in sequence order. Few rows: a lease is cleared
-- when its attempt is recorded.
CREATE INDEX "webhook_deliveries_leased_idx" ON "webhook_deliveries"("workspace_id", "webhook_id") WHERE "leased_until" IS NOT NULL;

-- CreateIndex: the webhooks whose probe is due (few: only failing ones have one).
CREATE INDEX "webhooks_next_probe_at_idx" ON "webhooks"("next_probe_at");
