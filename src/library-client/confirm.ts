/** A yes/no question in the page's own modal dialog (focus moves into it; Escape or Cancel says no). */
import { byId } from "./dom.js";

export function confirmAction(question: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>("confirm");
  byId("confirm-text").textContent = question;
  return new Promise((resolve) => {
    const ok = byId<HTMLButtonElement>("confirm-ok");
    const cancel = byId<HTMLButtonElement>("confirm-cancel");
    const finish = (answer: boolean) => {
      ok.onclick = null;
      cancel.onclick = null;
      dialog.onclose = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    ok.onclick = () => finish(true);
    cancel.onclick = () => finish(false);
    dialog.onclose = () => finish(false);
    dialog.showModal();
    cancel.focus(); // the safe answer is the default
  });
}
