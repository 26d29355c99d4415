// The status bar item: holds the current Status and redraws it on every event.

import * as vscode from 'vscode';
import { INITIAL, Status, StatusEvent, reduce, render } from './status';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private status: Status = INITIAL;

  constructor(command: string) {
    this.item.command = command;
    this.draw();
    this.item.show();
  }

  /** Apply one event and redraw. */
  update(event: StatusEvent): void {
    this.status = reduce(this.status, event);
    this.draw();
  }

  get current(): Status {
    return this.status;
  }

  dispose(): void {
    this.item.dispose();
  }

  private draw(): void {
    const { text, tooltip } = render(this.status);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      this.status.phase === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }
}
