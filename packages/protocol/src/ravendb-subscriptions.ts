// Subscriptions as RavenDB's clients create them (CreateSubscriptionCommand: `PUT …/subscriptions` with
// SubscriptionCreationOptions, sent without a Content-Type), read into Rookery's SubscriptionCreate.
import { z } from 'zod';
import { RookeryError } from './errors.js';
import { type SubscriptionCreate, SubscriptionCreateSchema } from './live.js';

export const RavenSubscriptionCreateSchema = z
  .object({
    Name: z.string().nullish(),
    Query: z.string(),
    /** Where to start: RavenDB's keywords only (a change vector of its own means nothing to Rookery). */
    ChangeVector: z
      .enum(['LastDocument', 'BeginningOfTime', 'DoNotChange'], {
        message:
          'Rookery starts a subscription at the beginning or at the last document: send no ChangeVector, "BeginningOfTime" or "LastDocument"',
      })
      .nullish(),
    MentorNode: z.string().nullish(),
    PinToMentorNode: z.boolean().nullish(),
    Disabled: z.literal(false, { message: 'a Rookery subscription cannot be created disabled' }).nullish(),
  })
  .strict();
export type RavenSubscriptionCreate = z.infer<typeof RavenSubscriptionCreateSchema>;

/** RavenDB's options as Rookery's; a subscription without a name gets `subscription-<time><random>`, as RavenDB names one. */
export function fromRavenSubscription(raven: RavenSubscriptionCreate): SubscriptionCreate {
  const name =
    raven.Name ?? `subscription-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const parsed = SubscriptionCreateSchema.safeParse({
    Name: name,
    Query: raven.Query,
    StartFrom: raven.ChangeVector === 'LastDocument' ? 'Now' : 'Beginning',
  });
  if (!parsed.success) {
    throw new RookeryError(
      'InvalidRequest',
      `The subscription is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}
