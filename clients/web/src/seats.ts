// How the app shows each game: its title and seat colours (presentation only, no rules).
export const TITLES: Record<string, string> = { connect4: "Connect Four", plus4: "Plus 4", coloursquare: "Colour Square" };

export const COLOURS: Record<string, string[]> = {
  connect4: ["#d93025", "#f4b400"],
  plus4: ["#d93025", "#1a73e8"],
  coloursquare: ["#7b1fa2", "#00897b", "#ef6c00", "#3949ab", "#c2185b", "#6d4c41"],
};
