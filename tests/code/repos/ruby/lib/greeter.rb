require_relative 'formatter'

# Greets people.
class Greeter < Base
  def greet(name)
    format_name(name)
  end

  def self.create
    new
  end
end

module Helpers
  def shout(text)
    text.upcase
  end
end
