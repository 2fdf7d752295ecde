import { PaymentRequiredError } from '../../core/errors.js';
import { roundUsd } from '../../core/models.js';
import { formatUsd } from '../../core/text/numbers.js';
import type { AccountRow } from '../../store/types.js';

/** Whether the account has a balance to check (a metered account); null means unmetered. */
export function isMetered(account: AccountRow | undefined): account is AccountRow & { balanceUsd: number } {
  return account !== undefined && account.balanceUsd !== null;
}

/**
 * A metered account must cover `billedUsd` before the provider is called; otherwise a 402 with
 * the balance fields. `what` names the thing billed ("this message").
 */
export function requireFunds(account: AccountRow & { balanceUsd: number }, billedUsd: number, what: string): void {
  const balance = account.balanceUsd;
  if (balance > 0 && balance >= billedUsd) return;
  const missing = roundUsd(Math.max(billedUsd - balance, 0));
  throw new PaymentRequiredError(
    `insufficient balance: ${formatUsd(balance)} left, ${what} costs ${formatUsd(billedUsd)}, ${formatUsd(missing)} missing`,
    { balanceUsd: balance, billedUsd, missingUsd: missing },
    { hint: `add funds: mgpt accounts topup ${account.name} 5`, detailed: true },
  );
}
