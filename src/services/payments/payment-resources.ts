/**
 * The JSON:API resources of the payments service (spec 001 section A: "Payment intent", "Card payment", voice
 * sessions): rows in, documents out. No reads, no rules.
 */
import type { SecretBox } from '../../platform/crypto.ts';
import type { CardPaymentRow, IntentRow, VoiceSessionRow } from './payment-store.ts';
import type { CardPaymentStatus, IntentStatus, VoiceSessionStatus } from './state-machines.ts';

/** Renders payment intents: their payer access (client secret and pay URL) needs the secrets and the public URL. */
export class PaymentResources {
  private readonly secrets: SecretBox;
  private readonly publicUrl: () => string;

  /**
   * @param options.secrets unseals the client secret of an intent.
   * @param options.publicUrl the service's public base URL (read at call time: tests bind the port after setup).
   */
  constructor(options: { secrets: SecretBox; publicUrl: () => string }) {
    this.secrets = options.secrets;
    this.publicUrl = options.publicUrl;
  }

  /** The client secret and pay URL of an intent while it is open or processing (else both null). */
  payerAccess(row: IntentRow): { clientSecret: string | null; payUrl: string | null } {
    if (row.status !== 'open' && row.status !== 'processing') return { clientSecret: null, payUrl: null };
    const clientSecret = this.secrets.decrypt(row.clientSecretSealed, row.id);
    return { clientSecret, payUrl: `${this.publicUrl()}/checkout/${row.id}#${clientSecret}` };
  }

  /** JSON:API resource of an intent (spec 001 A "Payment intent"). */
  intent(row: IntentRow) {
    const access = this.payerAccess(row);
    return {
      type: 'paymentIntent' as const,
      id: row.id,
      attributes: {
        amount: row.amount,
        currency: 'USD' as const,
        description: row.description,
        payUrl: access.payUrl,
        clientSecret: access.clientSecret,
        status: row.status as IntentStatus,
        taxMode: row.taxMode,
        taxAmount: row.taxAmount,
        lineItems: row.lineItems,
        expiresAt: row.expiresAt ? row.expiresAt.toISOString() : null,
        canceledAt: row.canceledAt ? row.canceledAt.toISOString() : null,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
      },
      relationships: {
        customerParty: { data: { type: 'party' as const, id: row.customerPartyId } },
        cardPayment: {
          data: row.cardPaymentId ? { type: 'cardPayment' as const, id: row.cardPaymentId } : null,
        },
        voiceSession: {
          data: row.voiceSessionId ? { type: 'voiceSession' as const, id: row.voiceSessionId } : null,
        },
      },
    };
  }
}

/** JSON:API resource of a card payment (spec 001 A "Card payment"; fields after `channel` are ours). */
export function cardPaymentResource(row: CardPaymentRow) {
  return {
    type: 'cardPayment' as const,
    id: row.id,
    attributes: {
      amount: row.amount,
      currency: 'USD' as const,
      status: row.status as CardPaymentStatus,
      brand: row.brand,
      last4: row.last4,
      channel: row.channel,
      failureCode: row.failureCode,
      failureMessage: row.failureMessage,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    },
    relationships: {
      paymentIntent: { data: { type: 'paymentIntent' as const, id: row.paymentIntentId } },
      voiceSession: {
        data: row.voiceSessionId ? { type: 'voiceSession' as const, id: row.voiceSessionId } : null,
      },
    },
  };
}

/** JSON:API resource of a voice session. */
export function voiceSessionResource(row: VoiceSessionRow) {
  return {
    type: 'voiceSession' as const,
    id: row.id,
    attributes: {
      status: row.status as VoiceSessionStatus,
      channel: 'voice' as const,
      endedReason: row.endedReason,
      endedAt: row.endedAt ? row.endedAt.toISOString() : null,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    },
    relationships: {
      paymentIntent: { data: { type: 'paymentIntent' as const, id: row.paymentIntentId } },
      cardPayment: {
        data: row.cardPaymentId ? { type: 'cardPayment' as const, id: row.cardPaymentId } : null,
      },
    },
  };
}
